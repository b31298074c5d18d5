"""The browser side of the chat box (chat_box.html, .css, .js), read from this folder.

Imports nothing of the project: the page (app.py) hands these files to Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXTENSIONS = ("html", "css", "js")  # in ComponentFiles' order


@dataclass(frozen=True)
class ComponentFiles:
    """A Streamlit component's HTML, CSS and JavaScript, as text."""

    html: str
    css: str
    js: str


@cache
def chat_box_files() -> ComponentFiles:
    """The chat box's files (read once per process; they ship with the package)."""
    html, css, js = ((HERE / f"chat_box.{ext}").read_text(encoding="utf-8") for ext in EXTENSIONS)
    return ComponentFiles(html, css, js)
