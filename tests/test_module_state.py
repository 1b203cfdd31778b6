"""robodyn keeps no hidden process-wide state: no module-level mutable container anywhere in src/.

Module-level names may hold true constants only (tuples, frozensets, types.MappingProxyType, numbers, strings,
functions, classes, ...); a list, dict, set or other mutable container assigned at module level, or a
``functools.cache`` / ``lru_cache`` / ``cached_property`` decorator, is a cache or global state in disguise.
Results derived from a robot, and the loaded native kernels, live in robodyn's one explicit store, the workspace of
:mod:`robodyn.model.workspace` (keyed by the robot's content, bounded, write-once); the robot holds no caches.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "robodyn"
MUTABLE_CALLS = {"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter", "bytearray",
                 "WeakValueDictionary", "WeakKeyDictionary", "WeakSet", "ChainMap", "ThreadPoolExecutor"}
CACHES = {"cache", "lru_cache", "cached_property"}


def _name(node) -> str | None:
    node = node.func if isinstance(node, ast.Call) else node
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _mutable(value) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    return isinstance(value, ast.Call) and _name(value) in MUTABLE_CALLS


def _module_level(body):
    """Statements run at import: the module's own and those nested in its if / try / with blocks."""
    for statement in body:
        yield statement
        for part in ("body", "orelse", "finalbody"):
            if isinstance(statement, (ast.If, ast.Try, ast.With)):
                yield from _module_level(getattr(statement, part, []) or [])
        for handler in getattr(statement, "handlers", []) or []:
            yield from _module_level(handler.body)


def offences(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    found = []
    for statement in _module_level(tree.body):
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and statement.value is not None \
                and _mutable(statement.value):
            target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
            found.append(f"{where}:{statement.lineno} {ast.unparse(target)} = {type(statement.value).__name__}")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                if _name(decorator) in CACHES:
                    found.append(f"{where}:{node.lineno} @{_name(decorator)} {node.name}")
    return found


def test_the_scan_finds_mutable_state():
    """The checker itself: every kind of offence is reported, true constants are not."""
    bad = ("_A = []\n_B: dict = {}\n_C = {1, 2}\n_D = [x for x in ()]\n_E = defaultdict(list)\n"
           "if True:\n    _F = {}\ntry:\n    _G = list()\nexcept ImportError:\n    _H = dict()\n"
           "@functools.lru_cache\ndef f(): pass\nclass K:\n    @cache\n    def g(self): pass\n")
    assert len(offences(bad, "x")) == 10
    good = ("from types import MappingProxyType\n_A = ()\n_B = frozenset({1})\n_C = MappingProxyType({'a': 1})\n"
            "_D = 'text'\n_E = 3\ndef f():\n    cache = {}\n    return cache\nclass K:\n    items = ()\n")
    assert offences(good, "x") == []


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_level_mutable_state(path):
    assert offences(path.read_text(encoding="utf-8"), str(path.relative_to(SRC.parent))) == []
