"""The public surface: at most 80 top-level names, the rest in documented namespaces, the former top-level names
kept as deprecated aliases for one release, and ``import robodyn`` / ``robodyn --version`` that import nothing
heavy (the names are imported on first use, PEP 562)."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import robodyn as rd

ROOT = Path(__file__).resolve().parent.parent
NAMESPACES = sorted(name for name, (_, attribute) in rd._PUBLIC.items() if attribute is None)


def test_the_top_level_has_at_most_80_names():
    assert len(rd._PUBLIC) <= 80
    assert set(rd.__all__) == set(rd._PUBLIC) - {"compile"}  # `from robodyn import *` keeps the builtin compile
    assert {name for name in dir(rd) if not name.startswith("_")} >= set(rd._PUBLIC)


@pytest.mark.parametrize("name", sorted(rd._PUBLIC))
def test_every_top_level_name_resolves_without_a_warning(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = getattr(rd, name)
    assert value is not None and (inspect.ismodule(value) or name.isupper() or callable(value))


@pytest.mark.parametrize("old", sorted(rd._MOVED))
def test_a_moved_name_is_a_deprecated_alias_of_its_new_place(old):
    where = rd._MOVED[old]
    with pytest.warns(DeprecationWarning, match=rf"robodyn\.{old} is deprecated .* use {where}\.{old}$"):
        alias = getattr(rd, old)
    assert alias is getattr(importlib.import_module(where), old)
    assert old not in rd.__all__ and old not in rd._PUBLIC


def test_the_alias_warning_points_at_the_callers_line():
    with pytest.warns(DeprecationWarning) as record:
        rd.calibrate_gravity  # noqa: B018
    assert record[0].filename == __file__


def test_from_import_of_a_moved_name_warns_too():
    with pytest.warns(DeprecationWarning, match="use robodyn.floating.floating_inverse_dynamics"):
        from robodyn import floating_inverse_dynamics  # noqa: F401


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_namespace_is_documented_and_lists_what_it_holds(namespace):
    module = getattr(rd, namespace)
    assert (module.__doc__ or "").strip(), namespace
    assert f"``rd.{namespace}``" in rd.__doc__, f"rd.{namespace} is missing from robodyn's docstring"
    assert module.__all__, f"rd.{namespace} has no __all__"
    for name in module.__all__:
        assert getattr(module, name) is not None, (namespace, name)
    assert set(module.__all__) <= set(dir(module)), namespace
    if namespace == "kinematics":   # a module, not a package: its own helpers stay out of dir()
        assert dir(module) == sorted(module.__all__)


def test_every_moved_name_is_public_in_its_namespace():
    for old, where in rd._MOVED.items():
        module = importlib.import_module(where)
        assert old in getattr(module, "__all__", dir(module)), (old, where)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_function'"):
        rd.no_such_function  # noqa: B018
    with pytest.raises(AttributeError):
        rd.floating.no_such_function  # noqa: B018
    assert not hasattr(rd, "_private_thing")


def test_a_submodule_is_reachable_as_an_attribute():
    assert rd.spatial is importlib.import_module("robodyn.spatial")


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return out.stdout


OPTIONAL = ("scipy", "sympy", "matplotlib", "cvxpy", "typer", "rich", "dask", "jax")
HEAVY = ("numpy", "yaml", *OPTIONAL)


def test_import_robodyn_imports_nothing_heavy():
    loaded = _fresh(f"import sys, robodyn; print(*[m for m in {HEAVY!r} if m in sys.modules])").split()
    assert loaded == []


def test_the_core_does_not_import_the_heavy_optional_parts():
    code = ("import sys, robodyn as rd; r = rd.load('planar2r'); rd.inverse_dynamics(r, [0.1, 0.2], [0, 0], [0, 0]); "
            f"print(*[m for m in {OPTIONAL!r} if m in sys.modules])")
    assert _fresh(code).split() == []


def test_version_answers_without_importing_the_library():
    code = ("import sys; sys.argv = ['robodyn', '--version']; from robodyn.cli import main; main(); "
            f"print(*[m for m in {HEAVY!r} + ('robodyn.model', 'robodyn.cli._app') if m in sys.modules])")
    lines = _fresh(code).splitlines()
    assert lines[0] == f"robodyn {rd.__version__}" and lines[1:] in ([], [""])


def test_the_console_script_is_main():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'robodyn = "robodyn.cli:main"' in text
