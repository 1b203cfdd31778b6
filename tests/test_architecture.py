"""The import drawing of robodyn holds: layers, no circles, no private names across modules, no monkeypatching.

The source is parsed (never imported) with :mod:`ast`; every ``import`` counts, also one inside a function or an
``if TYPE_CHECKING`` block, and a string that names a robodyn module (``import_module("robodyn.x")``) counts as an
import of it.  Four rules:

(a) no import circle, between modules or between the units of :data:`LAYERS` (packages and top-level modules);
(b) no import up the layers of :data:`LAYERS` (the same layer may import itself);
(c) no import of a private name ``_x`` from another module, and no private module ``robodyn._x`` /
    ``robodyn.pkg._x`` imported from outside its own package (a subpackage's ``_x`` module is shared by its
    siblings only, robodyn's top level has none); ``module._x`` attribute reads on an imported robodyn module count;
(d) no module assigns, deletes or ``setattr``s attributes of an imported module or name (``np.sin = ...``,
    ``setattr(np.linalg, ...)``) or walks ``sys.modules`` (the way to patch every loaded module).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "robodyn"

#: The layers, lowest first; a module belongs to the unit of its longest matching prefix.  A unit may import its
#: own layer and the layers below.  Small shared leaf modules sit at the bottom; spatial (algebra on plain arrays,
#: no robot) and the built-in robot files (data) below the model, whose constructor uses its rotations; the build service (compiler, cache) below the
#: native kernels that use it, both below kinematics (whose float64 paths call them); the facade ``robodyn`` (package __init__) below the CLI only.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("robodyn.errors", "robodyn.version", "robodyn.arrays", "robodyn.sanitize", "robodyn.threads",
     "robodyn.progress", "robodyn.files", "robodyn.decode", "robodyn.robots", "robodyn.lazy"),
    ("robodyn.spatial", "robodyn.dual"),
    ("robodyn.model",),
    ("robodyn.native.build",),
    ("robodyn.native",),
    ("robodyn.kinematics",),
    ("robodyn.dynamics",),
    ("robodyn.parameters", "robodyn.identification", "robodyn.logs"),
    ("robodyn.symbolic",),
    ("robodyn.simulation", "robodyn.analysis", "robodyn.control", "robodyn.interop", "robodyn.jax",
     "robodyn.plot", "robodyn.viewer", "robodyn.distributed", "robodyn.floating", "robodyn.closed_chain"),
    ("robodyn",),
    ("robodyn.cli",),
)
LAYER = {unit: k for k, units in enumerate(LAYERS) for unit in units}


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module
    name: str | None  # imported name (``from target import name``), None for a module
    line: int
    in_function: bool


def module_files(src: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under ``src`` (a package by its __init__)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _inside_functions(tree) -> set[int]:
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner.update(id(sub) for sub in ast.walk(node) if sub is not node)
    return inner


def imports_of(module: str, tree, is_package: bool, modules) -> list[Import]:
    """Every import of a robodyn module in ``tree`` (the module ``module``); ``modules``: the known module names."""
    top = module.split(".")[0]
    package = module if is_package else module.rpartition(".")[0]
    inner = _inside_functions(tree)
    found = []
    for node in ast.walk(tree):
        deep = id(node) in inner
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == top:
                    found.append(Import(module, alias.name, None, node.lineno, deep))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            if base.split(".")[0] != top:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(Import(module, sub, None, node.lineno, deep) if sub in modules
                             else Import(module, base, alias.name, node.lineno, deep))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules \
                and node.value != module and "." in node.value:
            found.append(Import(module, node.value, None, node.lineno, deep))  # import_module("robodyn.x")
    return found


def unit_of(module: str) -> str | None:
    parts = module.split(".")
    for k in range(len(parts), 0 if len(parts) == 1 else 1, -1):  # the facade "robodyn" is its __init__ only
        if ".".join(parts[:k]) in LAYER:
            return ".".join(parts[:k])
    return None


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imported_names(tree) -> dict[str, str]:
    """Local name -> the imported module or name it is bound to, for every import of the module."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _root(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mentions_sys_modules(node) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "modules" and _root(n) == "sys" for n in ast.walk(node))


def monkeypatches(tree, where: str) -> list[str]:
    """Rule (d) on one module."""
    bound = _imported_names(tree)
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                if isinstance(t, ast.Attribute) and _root(t) in bound:
                    found.append(f"{where}:{node.lineno} assigns {ast.unparse(t)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                and node.args and (_root(node.args[0]) in bound or _mentions_sys_modules(node.args[0])):
            found.append(f"{where}:{node.lineno} {node.func.id}({ast.unparse(node.args[0])}, ...)")
        if isinstance(node, (ast.For, ast.comprehension)) and _mentions_sys_modules(node.iter):
            found.append(f"{where}:{getattr(node, 'lineno', node.iter.lineno)} walks sys.modules")
    return found


@dataclass
class Report:
    circles: list[list[str]]
    unit_circles: list[list[str]]
    upward: list[str]
    private: list[str]
    patches: list[str]
    unplaced: list[str]
    in_functions: int


def check(src: Path = SRC) -> Report:
    modules = module_files(src)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    units: dict[str, set[str]] = {}
    upward, private, patches, unplaced, in_functions = [], [], [], [], set()
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = f"{module}:"
        patches += monkeypatches(tree, str(path.relative_to(src.parent)))
        if unit_of(module) is None:
            unplaced.append(module)
        found = imports_of(module, tree, path.name == "__init__.py", modules)
        in_functions.update((i.source, i.line) for i in found if i.in_function)
        aliases = {}
        for i in found:
            target = i.target if i.target in modules else None
            if target is None:
                continue
            if target != module and not module.startswith(target + "."):  # a package's own __init__ runs first anyway
                edges[module].add(target)
            su, tu = unit_of(module), unit_of(target)
            if su and tu and su != tu:
                units.setdefault(su, set()).add(tu)
                if LAYER[tu] > LAYER[su]:
                    upward.append(f"{where}{i.line} {module} ({su}) imports {target} ({tu})")
            # private module imported from outside its package, or a private name from another module
            parent, _, last = target.rpartition(".")
            if _private(last) and (parent == module.split(".")[0] or not (module.rpartition(".")[0] == parent
                                                                         or module == parent)):
                private.append(f"{where}{i.line} imports private module {target}")
            if i.name is not None and _private(i.name):
                private.append(f"{where}{i.line} imports {i.name} from {target}")
            if i.name is None:
                aliases[target.split(".")[-1]] = target
        for node in ast.walk(tree):  # module._x on an imported robodyn module
            if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and aliases[node.value.id] != module:
                private.append(f"{where}{node.lineno} reads {node.value.id}.{node.attr}")
    return Report(_cycles(edges), _cycles(units), sorted(set(upward)), sorted(set(private)), patches, unplaced,
                  len(in_functions))


# ---- the checker finds each kind of offence on a tiny synthetic package ------------------------------------------
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "robodyn"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checker_finds_each_kind_of_offence(tmp_path):
    src = _package(tmp_path, {
        "__init__.py": "",
        "errors.py": "",
        "model/__init__.py": "",
        "model/robot.py": "def f():\n    from robodyn.kinematics import x\n",  # upward, inside a function
        "kinematics.py": "from robodyn.errors import y\nfrom robodyn import errors\nerrors._hidden\n",
        "dynamics/__init__.py": "",
        "dynamics/a.py": "from robodyn.dynamics.b import _helper\nimport robodyn.dynamics.b\n",
        "dynamics/b.py": "from robodyn.dynamics import a\n",  # circle a <-> b
        "dynamics/_inner.py": "",
        "dynamics/c.py": "from robodyn.dynamics import _inner\nfrom robodyn import native\n",  # a sibling: allowed
        "native/__init__.py": "from robodyn.dynamics import _inner\nimport importlib\n"
                              "importlib.import_module('robodyn.dynamics.c')\n",  # private module, circle, upward
        "arrays.py": "import numpy as np\nnp.sin = None\nsetattr(np.linalg, 'cholesky', None)\n",
        "threads.py": "import sys\nfor m in list(sys.modules.values()):\n    pass\n",
        "stray.py": "",
    })
    report = check(src)
    assert report.circles == [["robodyn.dynamics.a", "robodyn.dynamics.b"], ["robodyn.dynamics.c", "robodyn.native"]]
    assert report.unit_circles == [["robodyn.dynamics", "robodyn.native"]]
    assert sorted(u.split(" ", 1)[1] for u in report.upward) == [
        "robodyn.model.robot (robodyn.model) imports robodyn.kinematics (robodyn.kinematics)",
        "robodyn.native (robodyn.native) imports robodyn.dynamics._inner (robodyn.dynamics)",
        "robodyn.native (robodyn.native) imports robodyn.dynamics.c (robodyn.dynamics)"]
    assert sorted(p.split(" ", 1)[1] for p in report.private) == [
        "imports _helper from robodyn.dynamics.b", "imports private module robodyn.dynamics._inner",
        "reads errors._hidden"]
    assert [p.split(" ", 1)[1] for p in report.patches] == [
        "assigns np.sin", "setattr(np.linalg, ...)", "walks sys.modules"]
    assert report.unplaced == ["robodyn.stray"] and report.in_functions == 1


def test_the_checker_passes_clean_code(tmp_path):
    src = _package(tmp_path, {
        "__init__.py": "from robodyn.dynamics import a\n",
        "errors.py": "",
        "dynamics/__init__.py": "",
        "dynamics/a.py": "from robodyn.errors import E\nimport numpy as np\nx = np.sin(1)\n"
                         "class K:\n    def __init__(self):\n        self.v = 1\n        setattr(self, 'w', 2)\n",
    })
    report = check(src)
    assert (report.circles, report.unit_circles, report.upward, report.private, report.patches, report.unplaced) == \
        ([], [], [], [], [], [])


# ---- robodyn itself ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report():
    return check()


def test_every_module_has_a_layer(report):
    assert report.unplaced == []


def test_no_import_circles(report):
    assert report.circles == [] and report.unit_circles == []


def test_no_import_up_the_layers(report):
    assert report.upward == []


def test_no_private_names_across_modules(report):
    assert report.private == []


def test_no_monkeypatching(report):
    assert report.patches == []


if __name__ == "__main__":  # the numbers: python tests/test_architecture.py
    r = check()
    print(f"circles {len(r.circles)} {r.circles}\nunit circles {len(r.unit_circles)} {r.unit_circles}\n"
          f"upward {len(r.upward)}\nprivate {len(r.private)}\npatches {len(r.patches)}\nunplaced {r.unplaced}\n"
          f"imports inside functions {r.in_functions}")
    for line in r.upward + r.private + r.patches:
        print(" ", line)
