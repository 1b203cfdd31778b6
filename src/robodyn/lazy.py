"""Namespaces whose names are imported on first use (PEP 562), so that ``import robodyn`` stays quick.

A namespace module lists where each of its names is defined, as ``name: (module, attribute)`` (``attribute`` None
for a module); :func:`attach` gives it the module-level ``__getattr__`` and ``__dir__`` that import the defining
module when a name is first read and keep the value.  Names that moved to another namespace keep working for one
release: reading one warns with a :class:`DeprecationWarning` that names the new place.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from importlib import import_module


def attach(namespace: dict, names: Mapping[str, tuple[str, str | None]], moved: Mapping[str, str] | None = None,
           submodules: bool = False) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``.

    Parameters
    ----------
    namespace : dict
        The module's ``globals()``; a name read once is stored there, so later reads cost nothing.
    names : mapping
        Public name -> ``(module, attribute)``: the value is ``module.attribute``, or the module itself when
        ``attribute`` is None.
    moved : mapping, optional
        Old name -> the namespace that holds it now (``"robodyn.floating"``): the deprecated alias.
    submodules : bool
        Whether any other public name ``x`` is looked up as the submodule ``<package>.x``.
    """
    owner = namespace["__name__"]
    moved = moved or {}

    def __getattr__(name: str):
        if name in names:
            module, attribute = names[name]
            value = import_module(module) if attribute is None else getattr(import_module(module), attribute)
            namespace[name] = value
            return value
        if name in moved:
            warnings.warn(f"{owner}.{name} is deprecated and goes away in the next release; "
                          f"use {moved[name]}.{name}", DeprecationWarning, stacklevel=2)
            return getattr(import_module(moved[name]), name)
        if submodules and name.isidentifier() and not name.startswith("_"):
            try:
                return import_module(f"{owner}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{owner}.{name}":
                    raise
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
