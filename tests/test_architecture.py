"""The package's shape: no module imports, directly or through others, a module that imports it.

The import graph is read from the source (``ast``), so that it holds every import — those at
the top of a module and those inside functions alike: a function-level import still ties the
two modules together, it only hides the circle until the function runs. Imports under
``if TYPE_CHECKING:`` are left out (they never run). An import of ``pkg.name`` is an edge to
the module ``pkg/name.py`` when there is one, else to the package ``pkg/__init__.py``.
Importing a submodule also loads its package first; that is not counted as an edge (a package
that imports its own modules would otherwise always be a circle).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set

PACKAGE = Path(__file__).resolve().parent.parent / "functionalbpe"


def module_names(root: Path) -> Dict[str, Path]:
    """``{dotted name: file}`` for every .py file of the package at ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.AST]:
    """Every Import / ImportFrom under ``node``, skipping ``if TYPE_CHECKING:`` bodies."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports_in(other)
            continue
        yield from _imports_in(child)


def _imports_in(node: ast.AST) -> Iterator[ast.AST]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def import_graph(root: Path) -> Dict[str, Set[str]]:
    """``{module: modules of the package it imports}``."""
    modules = module_names(root)
    graph: Dict[str, Set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _imports(tree):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = name.split(".")
                    base = base if is_package else base[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                for alias in node.names:
                    full = f"{prefix}.{alias.name}"
                    targets.append(full if full in modules else prefix)
            for target in targets:
                # "import a.b.c" loads a.b.c; keep the longest prefix that is one of ours.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """One circle (``[a, b, ..., a]``) for each group of modules that import each other
    (Tarjan's strongly connected components, then a shortest path back inside each)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    groups: List[List[str]] = []

    def visit(start: str) -> None:
        # Iterative, so that a deep graph cannot overflow Python's stack.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_circle(graph, group) for group in groups]


def reachable(graph: Dict[str, Set[str]], start: str) -> Set[str]:
    """The modules ``start`` imports, directly or through others."""
    seen: Set[str] = set()
    todo = [start]
    while todo:
        for child in graph[todo.pop()]:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def strongly_connected(graph: Dict[str, Set[str]], start: str) -> Set[str]:
    """The modules that ``start`` reaches and that reach ``start`` back."""
    reverse: Dict[str, Set[str]] = {node: set() for node in graph}
    for node, children in graph.items():
        for child in children:
            reverse[child].add(node)
    return (reachable(graph, start) | {start}) & (reachable(reverse, start) | {start})


def _circle(graph: Dict[str, Set[str]], group: List[str]) -> List[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    return paths[node] + [start]
                if child not in paths:
                    paths[child] = paths[node] + [child]
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"no circle in {group}")  # pragma: no cover (Tarjan found one)


def test_no_import_cycle_in_the_package():
    graph = import_graph(PACKAGE)
    found = cycles(graph)
    shown = []
    for circle in found:
        group = sorted(strongly_connected(graph, circle[0]))
        shown.append(" -> ".join(circle) + f"\n    (modules tied in this circle: {', '.join(group)})")
    assert not found, "import circles:\n" + "\n".join(shown)


def test_the_graph_holds_the_imports_the_source_makes():
    graph = import_graph(PACKAGE)
    assert "functionalbpe.tokenizer" in graph["functionalbpe"]  # from .tokenizer import Tokenizer
    assert "functionalbpe.errors" in graph["functionalbpe.tokenizer"]
    assert "functionalbpe.core.decoding" in graph["functionalbpe.tokenizer"]
    # A function-level import is an edge too: Tokenizer.stream_decoder imports StreamDecoder.
    assert "functionalbpe.core.streaming" in graph["functionalbpe.tokenizer"]
    # ... but the TYPE_CHECKING import of the Tokenizer in streaming.py is not.
    assert "functionalbpe.tokenizer" not in graph["functionalbpe.core.streaming"]


def test_peers_and_the_streaming_decoder_never_reach_the_tokenizer():
    """The peers take and give plain data and the Tokenizer builds itself; the streaming
    decoder works from the decoding kernel. Neither may import tokenizer.py, even through
    another module."""
    graph = import_graph(PACKAGE)
    below = [m for m in graph if m.startswith("functionalbpe.peers")]
    below += ["functionalbpe.core.streaming", "functionalbpe.core.decoding", "functionalbpe.util.display"]
    assert len(below) > 8
    for module in below:
        assert "functionalbpe.tokenizer" not in reachable(graph, module), module


def write_package(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    pkg = write_package(tmp_path, {
        "pkg/__init__.py": "from .a import f\n",
        "pkg/a.py": "from .sub import b\ndef f():\n    return b\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/b.py": "def g():\n    from ..a import f\n    return f\n",
        "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n",
        "pkg/d.py": "from . import c\nimport pkg.sub.b\n",
    })
    graph = import_graph(pkg)
    assert graph["pkg.c"] == set()  # TYPE_CHECKING only
    assert graph["pkg.d"] == {"pkg.c", "pkg.sub.b"}
    assert graph["pkg"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.a"]]


def test_a_circle_through_a_package_init_is_found(tmp_path):
    # "from .. import name" reads the package's __init__, which imports the module back.
    pkg = write_package(tmp_path, {
        "pkg/__init__.py": "from .m.x import y\nVERSION = 1\n",
        "pkg/m/__init__.py": "",
        "pkg/m/x.py": "def y():\n    from .. import VERSION\n    return VERSION\n",
    })
    assert cycles(import_graph(pkg)) == [["pkg", "pkg.m.x", "pkg"]]
