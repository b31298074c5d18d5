"""The import graph of assistant/, memory/ and the page: every import points down the layers.

Read from the source with `ast`, nothing imported. EVERY import statement counts: top
level, inside functions (lazy imports), and under `if TYPE_CHECKING:`, because an upward
import that only a lazy or a type-only import makes is still an upward dependency of
meaning, and the next refactor that hoists it breaks the import. `from package import
name` counts as an edge to `package.name` when that is a module, else to `package`; an
`importlib.import_module("...")` of a constant name counts too. A module's own parent
packages (`assistant.gates` for `assistant.gates.base`) are not counted as edges: Python
runs their `__init__` first, but those import nothing (or only their own submodules).

The layers are the table in docs/how-it-works.md ("Layers"), bottom first. A module may
import its own package and any layer below; two packages in one row never import each
other. tests/, bench/ and training/ stand above the table and may import anything.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("assistant", "memory")
PAGE = ("app", "app_turn", "app_sidebar")  # the Streamlit page, at the repository's root
MAX_LINES = 400

# Bottom first: the leaves, then each layer on the ones below it (docs/how-it-works.md).
# A row holds packages or modules that never import each other; the page's three files
# are one (a tuple).
LAYERS: tuple[tuple[str | tuple[str, ...], ...], ...] = (
    ("memory",),
    ("assistant.text",),
    ("assistant.config",),
    ("assistant.runtime",),
    ("assistant.conversation",),
    ("assistant.gates", "assistant.reply"),
    ("assistant.turn",),
    ("assistant.page", "assistant.eval"),
    ("assistant.talk",),
    ("assistant.cli",),
    (PAGE,),
)
# The root package's __init__ is empty; it stands in no layer.
UNLAYERED = ("assistant",)

Source = tuple[str, bool]  # (the module's text, whether it is a package's __init__)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_paths() -> dict[str, Path]:
    found = {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    found.update({name: ROOT / f"{name}.py" for name in PAGE})
    return found


def sources() -> dict[str, Source]:
    """module -> (source, is_package), for every module the layers cover."""
    return {
        name: (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for name, path in _module_paths().items()
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
        elif isinstance(node, ast.Call) and (name := _imported_by_name(node)):
            yield name


def _imported_by_name(call: ast.Call) -> str | None:
    """The module `importlib.import_module("a.b")` names, when it is a constant."""
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if called != "import_module" or not call.args:
        return None
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _known(target: str, modules: set[str]) -> str | None:
    """The project module `target` names: itself, or its nearest parent that is one."""
    parts = target.split(".")
    while parts:
        name = ".".join(parts)
        if name in modules:
            return name
        parts.pop()
    return None


def import_graph(modules: Mapping[str, Source] | None = None) -> dict[str, set[str]]:
    """module -> the project modules it imports (only those the layers cover)."""
    modules = sources() if modules is None else modules
    names = frozenset(modules)
    return {
        name: set(_edges(name, text, is_package, names))
        for name, (text, is_package) in modules.items()
    }


@functools.cache
def _edges(name: str, text: str, is_package: bool, names: frozenset[str]) -> frozenset[str]:
    # Cached: the checks on the checks parse the same tree again with one module changed.
    tree = ast.parse(text, filename=name)
    targets = {_known(t, names) for t in _imported(tree, name, is_package, names)}
    return frozenset(t for t in targets if t) - {name}


def _names(unit: str | tuple[str, ...]) -> tuple[str, ...]:
    return unit if isinstance(unit, tuple) else (unit,)


def layer_of(module: str) -> tuple[int, str] | None:
    """(the row in LAYERS, the package or module of that row it belongs to), or None."""
    for rank, row in enumerate(LAYERS):
        for unit in row:
            for name in _names(unit):
                if module == name or module.startswith(name + "."):
                    return rank, _names(unit)[0]
    return None


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import that points up the layers, or sideways within a row: 'a -> b (why)'."""
    found = []
    for module in sorted(graph):
        here = layer_of(module)
        if here is None:
            continue
        for target in sorted(graph[module]):
            there = layer_of(target)
            if there is None or there[1] == here[1] or there[0] < here[0]:
                continue
            why = "up" if there[0] > here[0] else "sideways, within one row"
            found.append(f"{module} -> {target} ({why})")
    return found


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
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


# -- the checks on the checks ------------------------------------------------------------


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


LAZY = "def f():\n    from assistant.turn.chat import Chat\n"
TYPE_ONLY = (
    "from typing import TYPE_CHECKING\n"
    "if TYPE_CHECKING:\n    from assistant.turn.front import Assistant\n"
)


@pytest.mark.parametrize(
    ("module", "is_package", "line", "target"),
    [
        # Today's upward imports, each added back where it was.
        ("assistant.config", False, "from assistant.gates.base import Method", "gates.base"),
        (
            "assistant.gates.corrections.cli",
            False,
            "from assistant.eval.gate_eval import score",
            "eval.gate_eval",
        ),
        ("assistant.conversation.reading", False, "import assistant.gates.base", "gates.base"),
        # Lazy, type-only, relative, by name, and sideways within a row.
        ("assistant.text", False, LAZY, "turn.chat"),
        ("assistant.runtime.llm", False, TYPE_ONLY, "turn.front"),
        ("assistant.gates.rules", False, "from ..turn import pipeline", "turn.pipeline"),
        ("assistant.reply", True, "from ..eval import stats", "eval.stats"),
        (
            "assistant.runtime.llm",
            False,
            "import importlib\nimportlib.import_module('assistant.cli')",
            "assistant.cli",
        ),
        ("assistant.reply.respond", False, "from assistant.gates.base import Method", "gates"),
        ("assistant.eval.load", False, "from assistant.page.session import STAGES", "page"),
        ("memory.records", False, "from assistant.text import words", "assistant.text"),
        ("assistant.cli", False, "import app", "-> app "),
    ],
)
def test_an_upward_import_added_back_is_reported(
    module: str, is_package: bool, line: str, target: str
) -> None:
    """The real tree, with one import added to one module: the check must name it."""
    tree = sources()
    text, _ = tree.get(module, ("", is_package))
    tree[module] = (text + "\n" + line + "\n", is_package)
    found = upward_imports(import_graph(tree))
    assert [f for f in found if f.startswith(module + " ->") and target in f], found


def test_imports_down_the_layers_and_within_a_package_are_not_reported() -> None:
    synthetic = {
        "assistant.turn.chat": (
            "from assistant.gates.base import Method\nimport memory.store",
            False,
        ),
        "assistant.gates.base": ("from assistant.config import GateMode", False),
        "assistant.gates.registry": ("from . import base\nfrom .base import Method", False),
        "assistant.config": ("", False),
        "memory.store": ("from memory.records import Memory", False),
        "memory.records": ("", False),
    }
    graph = import_graph(synthetic)
    assert graph["assistant.gates.registry"] == {"assistant.gates.base"}
    assert upward_imports(graph) == []


# -- the checks ---------------------------------------------------------------------------


def test_every_import_points_down_the_layers() -> None:
    found = upward_imports(import_graph())
    assert not found, (
        "imports that point up the layers (docs/how-it-works.md, 'Layers'; lazy and "
        "TYPE_CHECKING imports count): move the shared piece down, don't import up:\n"
        + "\n".join(found)
    )


def test_every_module_stands_in_a_layer() -> None:
    """A new top-level module or package must be placed in the table (and in the docs)."""
    homeless = [m for m in _module_paths() if m not in UNLAYERED and layer_of(m) is None]
    assert not homeless, f"modules in no layer (add them to LAYERS and the docs): {homeless}"


def _documented_layers() -> list[set[str]]:
    """The rows of the layer table in docs/how-it-works.md, bottom first, as module names."""
    text = (ROOT / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\|\s*\d+\s*\|", line)]
    layers = []
    for row in rows:
        packages = row.split("|")[2]
        names = re.findall(r"`([\w/.]+)`", packages)
        layers.append({n.removesuffix(".py").strip("/").replace("/", ".") for n in names})
    return layers


def test_the_documented_table_is_the_tested_one() -> None:
    assert _documented_layers() == [{n for unit in row for n in _names(unit)} for row in LAYERS]


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles (every import counts, lazy and TYPE_CHECKING too):\n" + (
        "\n".join(" <-> ".join(group) for group in found)
    )


def test_the_gate_contract_and_the_settings_are_leaves() -> None:
    """What every gate and the settings share imports nothing that could import them back."""
    graph = import_graph()
    contract = {"assistant.text", "assistant.config", "assistant.conversation.said"}
    assert graph["assistant.gates.base"] <= contract
    assert graph["assistant.conversation.said"] == set()
    assert graph["assistant.text"] == set()
    # The settings hold the gate modes' names; where the store is, the memory CLI reads too.
    assert graph["assistant.config"] <= {"assistant.text", "memory.settings"}
    assert not {m for m in graph["memory.settings"] if not m.startswith("memory.")}
    assert graph["assistant.runtime.completion"] <= {"assistant.text"}


def test_memory_imports_nothing_of_assistant() -> None:
    """memory/ is the store: the app (assistant/) builds on it, never the other way round."""
    offending = {
        module: {t for t in targets if not t.startswith("memory")}
        for module, targets in import_graph().items()
        if module.split(".")[0] == "memory"
    }
    offending = {module: targets for module, targets in offending.items() if targets}
    assert not offending, f"memory/ imports assistant/: {offending}"


def test_the_packages_load_nothing_heavy() -> None:
    """Importing every package of assistant/ (their __init__ files) loads no SDK or store."""
    packages = sorted(_module_name(path) for path in (ROOT / "assistant").rglob("__init__.py"))
    probe = (
        "import importlib, sys\n"
        f"for name in {packages!r}: importlib.import_module(name)\n"
        "heavy = ('anthropic', 'chromadb', 'streamlit', 'onnxruntime', 'xllamacpp')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_over_the_line_limit() -> None:
    """assistant/, memory/, the page and bench/: a module that grows past it is split."""
    paths = [*_module_paths().values(), *sorted((ROOT / "bench").glob("*.py"))]
    too_long = {str(p.relative_to(ROOT)): _lines(p) for p in paths if _lines(p) > MAX_LINES}
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"
