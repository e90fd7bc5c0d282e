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
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

PACKAGE = Path(__file__).resolve().parent.parent.parent / "functionalbpe"
DESIGN = PACKAGE.parent / "docs" / "design.md"

# Upward imports allowed, with their reasons (docs/design.md says why there are none).
ALLOWED_UPWARD: Dict[Tuple[str, str], str] = {}


def module_names(root: Path) -> Dict[str, Path]:
    """``{dotted name: file}`` for every .py file of the package at ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def compiled_modules(root: Path) -> Dict[str, Path]:
    """``{dotted name: .pyx source}`` for the compiled modules of the package at ``root``:
    ``csrc/_x.pyx`` beside the package builds ``<package>._x``."""
    return {f"{root.name}.{path.stem}": path for path in sorted((root.parent / "csrc").glob("*.pyx"))}


# A .pyx file is not Python: its Python-level imports are read line by line (C-level
# ``cimport`` lines are not imports of the package), indented ones inside functions too.
_PYX_IMPORT = re.compile(r"^\s*(?:from\s+(\.*)([\w.]*)\s+import\s+([\w, ()]+)|import\s+([\w.]+))", re.M)


def _pyx_targets(root: Path, path: Path) -> Iterator[str]:
    """The dotted names a .pyx file imports, relative ones resolved against the package."""
    for dots, module, names, plain in _PYX_IMPORT.findall(path.read_text(encoding="utf-8")):
        if plain:
            yield plain
            continue
        prefix = ".".join(([root.name] if dots else []) + ([module] if module else []))
        for name in re.findall(r"\w+", names):
            yield f"{prefix}.{name}"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, type_only: bool) -> Iterator[ast.AST]:
    """Every Import / ImportFrom under ``node``; those in ``if TYPE_CHECKING:`` bodies only
    with ``type_only``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test) and not type_only:
            for other in child.orelse:
                yield from _imports_in(other, type_only)
            continue
        yield from _imports_in(child, type_only)


def _imports_in(node: ast.AST, type_only: bool) -> Iterator[ast.AST]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node, type_only)


def import_graph(root: Path, type_only: bool = False) -> Dict[str, Set[str]]:
    """``{module: modules of the package it imports}``; with ``type_only``, the imports made
    for the type checker alone count too."""
    modules: Dict[str, Path] = {**module_names(root), **compiled_modules(root)}
    graph: Dict[str, Set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        if path.suffix == ".pyx":
            for target in _pyx_targets(root, path):
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
            continue
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _imports(tree, type_only):
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


def layer_table(design: Path) -> Dict[str, int]:
    """``{path inside the package: layer}`` from the table under "## Layers" in design.md:
    each row's first cell is the layer, the second names modules and folders in backticks."""
    text = design.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    table: Dict[str, int] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].isdigit():
            for path in re.findall(r"`([^`]+)`", cells[1]):
                table[path] = int(cells[0])
    return table


def layer_of(root: Path, module: str, table: Dict[str, int]) -> Optional[int]:
    """The layer of a dotted module of the package at ``root``: the row naming its file, else
    the row of the nearest folder holding it; None if no row places it. A compiled module
    is placed by the row naming its source, ``csrc/_x.pyx``."""
    compiled = compiled_modules(root)
    if module in compiled:
        return table.get(str(compiled[module].relative_to(root.parent)))
    path = module_names(root)[module].relative_to(root)
    best: Optional[Tuple[int, int]] = None
    for entry, layer in table.items():
        name = entry.rstrip("/")
        if str(path) == name or (entry.endswith("/") and str(path).startswith(entry)):
            if best is None or len(name) > best[0]:
                best = (len(name), layer)
    return best[1] if best else None


def upward_imports(root: Path, table: Dict[str, int], allowed: Dict[Tuple[str, str], str],
                   type_only: bool = True) -> List[str]:
    """Every import of a module from a higher layer, as ``a (layer) -> b (layer)``: those
    made for the type checker alone too (a type is a dependency), unless ``type_only`` is
    False."""
    graph = import_graph(root, type_only)
    found = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            low, high = layer_of(root, module, table), layer_of(root, target, table)
            if low is not None and high is not None and high > low and (module, target) not in allowed:
                found.append(f"{module} (layer {low}) -> {target} (layer {high})")
    return found


def _private_names_defined(tree: ast.AST) -> Set[str]:
    """The private names a file defines: functions, classes, module names and attributes it
    assigns (``self._x = ...``); dunders are not private."""
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for part in ast.walk(target):
                    if isinstance(part, ast.Name):
                        names.add(part.id)
                    elif isinstance(part, ast.Attribute):
                        names.add(part.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def private_reads(root: Path) -> List[str]:
    """Every read of another module's private name: ``x._name`` (``x`` not ``self`` or
    ``cls``) where ``_name`` is defined in another file of the package and not in the
    reading one, and ``from .m import _name``; as ``module:line what``."""
    trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in module_names(root).items()}
    own = {name: _private_names_defined(tree) for name, tree in trees.items()}
    anywhere = set().union(*own.values())
    found = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                if node.attr in anywhere and node.attr not in own[name]:
                    found.append(f"{name}:{node.lineno} {ast.unparse(node)[:60]}")
            elif isinstance(node, ast.ImportFrom) and node.level:
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__") and \
                            f"{name.rpartition('.')[0]}.{alias.name}" not in trees:  # a module is not a name
                        found.append(f"{name}:{node.lineno} import {alias.name}")
    return found


def test_no_module_reads_another_modules_private_names():
    found = private_reads(PACKAGE)
    assert not found, "private names read across modules (declare what is needed):\n" + "\n".join(found)


def test_a_planted_private_read_is_found(tmp_path):
    pkg = write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "class A:\n    def __init__(self):\n        self._state = 1\n",
        "pkg/b.py": "from .a import A, _helper\ndef f(x: A):\n    return x._state\n",
    })
    assert sorted(private_reads(pkg)) == ["pkg.b:1 import _helper", "pkg.b:3 x._state"]


def test_every_module_has_a_layer_and_every_row_names_what_exists():
    table = layer_table(DESIGN)
    assert len(table) > 20
    missing = [p for p in table if not (PACKAGE.parent / p if p.endswith(".pyx") else PACKAGE / p.rstrip("/")).exists()]
    assert not missing, f"docs/design.md's layer table names what is not in the package: {missing}"
    unplaced = [m for m in [*module_names(PACKAGE), *compiled_modules(PACKAGE)] if layer_of(PACKAGE, m, table) is None]
    assert not unplaced, f"modules no row of docs/design.md's layer table places: {unplaced}"


def test_imports_only_go_down():
    found = upward_imports(PACKAGE, layer_table(DESIGN), ALLOWED_UPWARD)
    assert not found, "upward imports (a module imports a higher layer):\n" + "\n".join(found)
    graph = import_graph(PACKAGE)
    for module, target in ALLOWED_UPWARD:  # an exception that is no longer needed goes
        assert target in graph[module], f"{module} -> {target} is allowed but not made"


def planted(tmp_path: Path, files: Dict[str, str], low: str) -> Tuple[Path, Dict[str, int]]:
    """A package of ``files`` and its layer table: ``low`` in layer 1, ``high.py`` above it."""
    pkg = write_package(tmp_path, {"pkg/__init__.py": "", **files})
    design = tmp_path / "design.md"
    design.write_text(f"## Layers\n\n| layer | modules |\n|---|---|\n| 1 | `{low}` |\n| 2 | `high.py`, `__init__.py` |\n")
    return pkg, layer_table(design)


def test_a_planted_upward_import_is_found(tmp_path):
    pkg, table = planted(tmp_path, {
        "pkg/low/__init__.py": "",
        "pkg/low/a.py": "def f():\n    from ..high import b\n    return b\n",
        "pkg/high.py": "from .low import a\n",
    }, "low/")
    assert table == {"low/": 1, "high.py": 2, "__init__.py": 2}
    assert upward_imports(pkg, table, {}) == ["pkg.low.a (layer 1) -> pkg.high (layer 2)"]
    assert upward_imports(pkg, table, {("pkg.low.a", "pkg.high"): "a reason"}) == []


def test_a_planted_upward_import_for_the_type_checker_is_found(tmp_path):
    pkg, table = planted(tmp_path, {
        "pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import T\n",
        "pkg/high.py": "from . import low\nT = int\n",
    }, "low.py")
    assert upward_imports(pkg, table, {}) == ["pkg.low (layer 1) -> pkg.high (layer 2)"]
    assert upward_imports(pkg, table, {}, type_only=False) == []


def test_no_import_cycle_in_the_package_counting_type_only_imports():
    graph = import_graph(PACKAGE, type_only=True)
    assert any(graph[m] - import_graph(PACKAGE)[m] for m in graph)  # type-only edges are read
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
    assert import_graph(pkg, type_only=True)["pkg.c"] == {"pkg.a"}
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


def test_the_compiled_modules_import_modules_that_exist():
    """Every name of the package a .pyx module imports is a module of it, or a name in one
    (the graph reads these imports, so a wrong one would hide an edge)."""
    modules = {**module_names(PACKAGE), **compiled_modules(PACKAGE)}
    assert len(compiled_modules(PACKAGE)) >= 5
    for name, path in compiled_modules(PACKAGE).items():
        for target in _pyx_targets(PACKAGE, path):
            if target.split(".")[0] == PACKAGE.name:
                assert target in modules or target.rpartition(".")[0] in modules, f"{path.name}: {target}"


def test_a_planted_pyx_import_is_read(tmp_path):
    pkg = write_package(tmp_path, {"pkg/__init__.py": "", "pkg/low.py": "", "pkg/high.py": ""})
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "_fast.pyx").write_text(
        "from libc.stdint cimport uint32_t\nimport pkg.high as h\ndef f():\n    from .low import x\n")
    assert import_graph(pkg)["pkg._fast"] == {"pkg.high", "pkg.low"}


def test_no_production_module_imports_the_lesson():
    """core/reference.py is what the fast paths are tested against: only the tests and the
    teaching modules read it, so that a change to the lesson cannot change production."""
    graph = import_graph(PACKAGE, type_only=True)
    lesson = "functionalbpe.core.reference"
    readers = sorted(m for m, targets in graph.items() if lesson in targets and not m.startswith("functionalbpe.teach"))
    assert not readers, f"production modules import the lesson: {readers}"
