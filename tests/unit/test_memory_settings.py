"""Where the store is (memory/settings.py): read alike by the app and by python -m memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assistant.config import Settings, SettingsError
from memory.settings import StoreSettings

ROOT = Path(__file__).resolve().parents[2]
ENV = {
    "MEMGATE_MEMORY_DIR": "/data/mem",
    "MEMGATE_USER": "sam",
    "MEMGATE_CHROMA_HOST": "chroma.local",
    "MEMGATE_CHROMA_PORT": "8123",
    "MEMGATE_MIN_SIMILARITY": "0.4",
    "XDG_CACHE_HOME": "/data/cache",
}


@pytest.mark.parametrize("env", [{}, ENV], ids=["defaults", "set"])
def test_the_app_and_the_memory_cli_read_the_same_store(env: dict[str, str]) -> None:
    assert Settings.from_env(env).store == StoreSettings.from_env(env)


def test_the_names_and_defaults() -> None:
    assert StoreSettings.from_env(ENV) == StoreSettings(
        Path("/data/mem"), "sam", "chroma.local", 8123, 0.4, Path("/data/cache")
    )
    default = StoreSettings.from_env({"HOME": "/home/sam"})
    assert (default.memory_dir, default.user_id, default.chroma_host) == (
        Path(".memory-gate"),
        "demo",
        None,
    )
    assert (default.chroma_port, default.min_similarity) == (8000, None)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MEMGATE_CHROMA_PORT", "http"),
        ("MEMGATE_CHROMA_PORT", "70000"),
        ("MEMGATE_MIN_SIMILARITY", "2"),
    ],
)
def test_bad_values_are_refused_with_their_name(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        StoreSettings.from_env({name: value})
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})


def test_command_line_options_win_and_a_folder_means_that_folder() -> None:
    env = StoreSettings.from_env(ENV)
    assert env.overridden() == env
    folder = env.overridden(memory_dir="elsewhere", user_id="kim")
    assert (folder.memory_dir, folder.user_id, folder.chroma_host) == (
        Path("elsewhere"),
        "kim",
        None,  # --dir means the folder, even when the environment names a server
    )
    server = env.overridden(host="other", port=9000)
    assert (server.chroma_host, server.chroma_port, server.memory_dir) == (
        "other",
        9000,
        Path("/data/mem"),
    )


def test_the_memory_cli_imports_nothing_from_assistant() -> None:
    # The store itself is not opened (that needs Chroma): open() hands back the settings.
    script = (
        "import sys\n"
        "from memory.settings import StoreSettings\n"
        "StoreSettings.open = lambda self: self\n"
        "from memory.__main__ import build_parser, open_store\n"
        "opened = open_store(build_parser().parse_args(['--user', 'kim', 'list']))\n"
        "assert opened.user_id == 'kim', opened\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'assistant')\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=60)
