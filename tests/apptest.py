"""Streamlit's AppTest, made once per run what it would otherwise redo for every AppTest.

Each new AppTest scans the metadata of every installed package for Streamlit components
before its first run: ~0.5 s on 2 cores, about a quarter of an app test, and ~55 of them
in a full run. The installed packages do not change while the tests run, so the first
scan's answer serves them all. The app's own component (the chat box) is declared in
app.py, not found by this scan, so every test still mounts it as the demo does.
"""

from __future__ import annotations

import functools
import sys

import pytest


def _scan_once() -> None:
    # streamlit.components.v2.component_manager imports the scanner inside the function
    # that calls it, so the module attribute is what every AppTest reads.
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if not isinstance(scan, functools._lru_cache_wrapper):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Once AppTest is loaded (an app test file imports it), scan for components once."""
    if "streamlit.testing.v1" in sys.modules:
        _scan_once()
