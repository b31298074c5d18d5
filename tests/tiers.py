"""Test tiers: `pytest --fast` runs the unit tier (no Chroma, no ONNX, no servers, no browser).

A test's tier is found, not declared by hand: markers come from the heavy modules its file
imports at the top, from the heavy fixtures it uses, and from explicit marks (`eval`,
`browser`, `server`, `local_model`). With `--fast`, files with heavy imports are not even
imported, heavy tests are deselected, and a test that still loads Chroma, ONNX or the
Streamlit test runner fails and says how to move it. Without `--fast` everything runs.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Markers of the slow tiers; the fast tier is everything without one of them.
HEAVY_MARKERS = ("chroma", "app", "eval", "browser", "server", "local_model")
# Module prefixes whose top-level import makes a test file slow, and the marker it gets.
HEAVY_IMPORTS = {
    "chromadb": "chroma",
    "onnxruntime": "chroma",
    "memory.store": "chroma",
    "memory.embeddings": "chroma",
    "tests.servers.chroma_server": "server",
    "tests.servers.store_worker": "server",
    "streamlit": "app",
    "playwright": "browser",
    "tests.browser": "browser",
    "xllamacpp": "local_model",
}
# Fixtures that start something heavy, and the marker a test using one gets.
HEAVY_FIXTURES = {
    "store": "chroma",  # a real Chroma store with the offline embedding model
    "local": "chroma",  # the local gate: MiniLM embeddings through ONNX
    "rule_only": "chroma",
    "app": "app",  # the Streamlit app under AppTest
    "online_app": "app",
    "memory_dir": "app",
    "server": "server",  # a real Chroma or llama.cpp server
    "chroma_server": "server",
    "browser_ready": "browser",
}
# Loaded by nothing a unit test should touch; seen in sys.modules means the tier leaked.
GUARDED_MODULES = ("chromadb", "onnxruntime", "streamlit.testing", "playwright", "xllamacpp")


def _heavy_imports(path: Path) -> set[str]:
    """Markers implied by the file's top-level imports (lazy imports inside tests don't count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return {
        marker
        for name in names
        for prefix, marker in HEAVY_IMPORTS.items()
        if name == prefix or name.startswith(prefix + ".")
    }


def _guarded_loaded() -> set[str]:
    return {m for m in GUARDED_MODULES if m in sys.modules}


def pytest_addoption(parser: pytest.Parser) -> None:
    """--fast: the unit tier only."""
    parser.addoption(
        "--fast",
        action="store_true",
        help="run the unit tier only: no Chroma, no ONNX, no servers, no browser",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the tier markers (pyproject.toml lists them too, for --strict-markers)."""
    for marker in HEAVY_MARKERS:
        config.addinivalue_line("markers", f"{marker}: a slow tier, left out by --fast")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With --fast, a test file that imports Chroma or Streamlit at the top is not imported."""
    if not config.getoption("--fast") or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return True if _heavy_imports(collection_path) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the tiers its imports and fixtures imply; --fast drops heavy ones."""
    cache: dict[Path, set[str]] = {}
    for item in items:
        path = Path(str(item.path))
        if path not in cache:
            cache[path] = _heavy_imports(path)
        markers = set(cache[path])
        markers |= {HEAVY_FIXTURES[f] for f in item.fixturenames if f in HEAVY_FIXTURES}
        for marker in markers:
            item.add_marker(marker)
    if not config.getoption("--fast"):
        return
    keep, drop = [], []
    for item in items:
        heavy = any(item.get_closest_marker(m) for m in HEAVY_MARKERS)
        (drop if heavy else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    loaded = _guarded_loaded()
    if loaded:
        raise pytest.UsageError(
            f"the fast tier imported {sorted(loaded)} while collecting: a test file imports it "
            "through a module that looks light. Import it inside the test, or mark the file."
        )


@pytest.fixture(autouse=True)
def _fast_tier_stays_fast(request: pytest.FixtureRequest) -> Iterator[None]:
    """With --fast, fail a test that loaded Chroma, ONNX, AppTest, Playwright or llama.cpp."""
    if not request.config.getoption("--fast"):
        yield
        return
    before = _guarded_loaded()
    yield
    leaked = _guarded_loaded() - before
    if leaked:
        pytest.fail(
            f"a fast-tier test loaded {sorted(leaked)}: use the fakes in tests/fakes.py, or "
            f"give it a tier marker ({', '.join(HEAVY_MARKERS)})",
            pytrace=False,
        )
