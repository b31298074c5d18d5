"""The page's helpers: what the Streamlit page (app.py) shows, with no Streamlit here.

- `display`: the text the page shows, as pure functions: escaped markdown, times, tables;
- `session`: per-session figures for the sidebar, over the list of `Exchange` records;
- `inbox`: messages sent and not yet answered, each taken once, in the order sent;
- `ui/`: the chat box's browser side (a small Streamlit component: HTML, CSS, JavaScript).

May import every layer below the page: the turn and all under it, and `memory`; never the
evaluations, the commands or the page itself (app*.py). Pure Python, so what the screen
says is unit-tested without a browser. Nothing is imported here.
"""
