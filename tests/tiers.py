"""Test tiers: the folder a test lives in is its tier.

tests/unit/         logic on in-process fakes (tests/fakes.py, the fake Messages API on
                    127.0.0.1): no Chroma, no ONNX, no Streamlit, no servers, no browser.
                    `make test-fast` (`pytest tests/unit`, or `pytest --fast`) runs it.
tests/integration/  the real memory store (Chroma, the ONNX embedding model), real Chroma and
                    llama.cpp servers, the app under Streamlit's AppTest, the evaluations.
tests/browser/      the demo in a real headless Chromium (Playwright).

The unit folder is guarded: a unit test whose file imports a heavy module at the top, that
asks for a heavy fixture or carries a slow-tier marker stops the run at collection, and one
that still loads Chroma, ONNX, AppTest, Playwright or llama.cpp while it runs fails; both say
to move it to tests/integration. Elsewhere the same signs only mark the test (`-m chroma`,
`-m "not browser"`, ...).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
UNIT = TESTS / "unit"
# Markers of the slow tiers: no test in tests/unit carries one.
HEAVY_MARKERS = ("chroma", "app", "eval", "browser", "server", "local_model")
# Module prefixes whose top-level import makes a test file slow, and the marker it gets.
HEAVY_IMPORTS = {
    "chromadb": "chroma",
    "onnxruntime": "chroma",
    "memory.store": "chroma",
    "memory.embeddings": "chroma",
    "tests.servers": "server",
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
MOVE_IT = "move it to tests/integration (or use the fakes in tests/fakes.py)"


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


def is_unit(path: Path | str) -> bool:
    """True for a path inside tests/unit."""
    return Path(path).resolve().is_relative_to(UNIT)


def pytest_addoption(parser: pytest.Parser) -> None:
    """--fast: the unit tier only (the same as `pytest tests/unit`)."""
    parser.addoption(
        "--fast",
        action="store_true",
        help="run tests/unit only: no Chroma, no ONNX, no servers, no browser",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the tier markers (pyproject.toml lists them too, for --strict-markers)."""
    for marker in HEAVY_MARKERS:
        config.addinivalue_line("markers", f"{marker}: a slow tier (never in tests/unit)")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With --fast, nothing outside tests/unit is collected (or imported)."""
    if not config.getoption("--fast"):
        return None
    path = collection_path.resolve()
    if not path.is_relative_to(TESTS) or path == TESTS or is_unit(path):
        return None
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the tiers its folder, imports and fixtures imply; guard tests/unit."""
    cache: dict[Path, set[str]] = {}
    misplaced: list[str] = []
    for item in items:
        path = Path(str(item.path))
        if path not in cache:
            cache[path] = _heavy_imports(path)
        markers = set(cache[path])
        markers |= {HEAVY_FIXTURES[f] for f in item.fixturenames if f in HEAVY_FIXTURES}
        if path.resolve().is_relative_to(TESTS / "browser"):
            markers.add("browser")
        for marker in markers:
            item.add_marker(marker)
        if is_unit(path):
            heavy = sorted(m for m in HEAVY_MARKERS if item.get_closest_marker(m))
            if heavy:
                misplaced.append(f"{item.nodeid} ({', '.join(heavy)})")
    if misplaced:
        raise pytest.UsageError(
            f"tests/unit holds slow-tier tests: {MOVE_IT}:\n  " + "\n  ".join(misplaced)
        )
    loaded = _guarded_loaded()
    if loaded and items and all(is_unit(item.path) for item in items):
        raise pytest.UsageError(
            f"collecting tests/unit imported {sorted(loaded)}: a unit test file imports it "
            f"through a module that looks light. Import it inside an integration test: {MOVE_IT}."
        )


@pytest.fixture(autouse=True)
def _unit_tier_stays_fast(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a unit test that loaded Chroma, ONNX, AppTest, Playwright or llama.cpp."""
    if not is_unit(request.path):
        yield
        return
    before = _guarded_loaded()
    yield
    leaked = _guarded_loaded() - before
    if leaked:
        pytest.fail(
            f"a unit test loaded {sorted(leaked)}: {MOVE_IT}, or give it a tier marker "
            f"({', '.join(HEAVY_MARKERS)}) there",
            pytrace=False,
        )
