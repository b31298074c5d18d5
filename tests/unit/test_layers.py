"""The import graph of assistant/ and memory/: no circles, and memory/ below assistant/.

Read from the source with `ast`, nothing imported. EVERY import statement counts: top
level, inside functions (lazy imports), and under `if TYPE_CHECKING:`, because a circle
that only a lazy or a type-only import closes is still a circle of meaning, and the next
refactor that hoists one of them breaks the import. `from package import name` counts as
an edge to `package.name` when that is a module, else to `package`. A module's own
parent packages (`assistant.gates` for `assistant.gates.base`) are not counted as edges:
Python runs their `__init__` first, but an `__init__` that imports nothing (or only its
own submodules) cannot close a circle through them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("assistant", "memory")
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _imported(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> Iterator[str]:
    """Every module an import statement of `tree` names, relative imports resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                # `from a.b import c`: the module a.b.c when there is one, else a name of a.b.
                sub = f"{target}.{alias.name}"
                yield sub if sub in modules else target


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (only assistant/ and memory/ ones)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        targets = _imported(tree, name, is_package, set(modules))
        graph[name] = {t for t in targets if t in modules} - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_assistant_or_memory() -> None:
    found = circles(import_graph())
    assert not found, "import circles (every import counts, lazy and TYPE_CHECKING too):\n" + (
        "\n".join(" <-> ".join(group) for group in found)
    )


def test_the_gate_contract_and_the_settings_are_leaves() -> None:
    """What every gate and the settings share imports nothing that could import them back."""
    graph = import_graph()
    # The conversation's record is a leaf the gate contract holds, not the other way round.
    contract = {"assistant.text", "assistant.config", "assistant.conversation.said"}
    assert graph["assistant.gates.base"] <= contract
    assert graph["assistant.conversation.said"] == set()
    assert graph["assistant.text"] == set()
    # The settings hold the gate modes' names; where the store is, the memory CLI reads too.
    assert graph["assistant.config"] <= {"assistant.text", "memory.settings"}
    assert not {m for m in graph["memory.settings"] if m.startswith("assistant.")}
    assert graph["assistant.runtime.completion"] <= {"assistant.text"}
    # The follow-up reading is a step of the chain, not a user of it.
    reading = graph["assistant.conversation.reading"]
    assert not {m for m in reading if m.startswith("assistant.gates.")}


def _memory_imports_of_assistant() -> dict[str, set[str]]:
    return {
        module: {t for t in targets if t.split(".")[0] == "assistant"}
        for module, targets in import_graph().items()
        if module.split(".")[0] == "memory"
    }


def test_memory_imports_nothing_of_assistant() -> None:
    """memory/ is the store: the app (assistant/) builds on it, never the other way round."""
    offending = {
        module: targets for module, targets in _memory_imports_of_assistant().items() if targets
    }
    assert not offending, f"memory/ imports assistant/: {offending}"


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_over_the_line_limit() -> None:
    too_long = {
        str(path.relative_to(ROOT)): _lines(path)
        for path in _modules().values()
        if _lines(path) > MAX_LINES
    }
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"
