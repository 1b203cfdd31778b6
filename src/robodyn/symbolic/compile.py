"""``rd.compile``: a customized model compiled to machine code, called like the numeric functions.

    idm = rd.compile(robot, "inverse_dynamics", parameters="base")
    tau = idm(q, qd, qdd)                 # same signature and checks as rd.inverse_dynamics

The model is generated once (gravity as an argument, external wrenches only in a second variant built
the first time ``wrenches`` is given), emitted as C99, compiled into the cache and called through cffi
on contiguous (N, n) blocks: the loop over samples runs in C.
"""

from __future__ import annotations

import numpy as np

from robodyn._arrays import check_array, joint_arrays
from robodyn.errors import InputError
from robodyn.symbolic.models import SHORT, customized_model

#: kind -> (joint arguments, takes wrenches, takes gravity)
_SIGNATURES = {
    "inverse_dynamics": (("q", "qd", "qdd"), True, True),
    "bias": (("q", "qd"), True, True),
    "gravity": (("q",), False, True),
    "inertia_matrix": (("q",), False, False),
    "forward_dynamics": (("q", "qd", "tau"), True, True),
    "regressor": (("q", "qd", "qdd"), False, True),
}


class CompiledModel:
    """Callable compiled model; ``model`` is the underlying :class:`CustomizedModel` (no wrenches)."""

    def __init__(self, robot, kind: str, parameters: str = "standard", backend: str = "c"):
        kind = SHORT.get(kind, kind)
        if kind not in _SIGNATURES:
            raise InputError(f"kind = {kind!r}; choose one of {', '.join(_SIGNATURES)}")
        if backend not in ("c", "numpy"):
            raise InputError(f"backend = {backend!r}; choose 'c' or 'numpy'")
        self.robot, self.kind, self.parameters, self.backend = robot, kind, parameters, backend
        self._joint, self._takes_wrenches, self._takes_gravity = _SIGNATURES[kind]
        self._variants = {}
        self.model = self._variant(False)[0]
        self.__doc__ = f"Compiled {kind} of robot {robot.name} ({parameters} parameters, {backend})."

    def _variant(self, wrenches: bool):
        if wrenches not in self._variants:
            m = customized_model(self.robot, self.kind, parameters=self.parameters,
                                 gravity="input" if self._takes_gravity else "constant",
                                 wrenches="all" if wrenches else "none")
            self._variants[wrenches] = (m, self._load(m))
        return self._variants[wrenches]

    def _load(self, m):
        if self.backend == "numpy":
            f = m.numpy_function()
            return lambda count, *arrays: f(*arrays)
        from robodyn.symbolic.codegen import c_code
        from robodyn.symbolic.codegen.build import compile_library

        name = "rd_model"
        ffi, lib = compile_library(c_code.source(m, name), c_code.declarations(m, name))
        fn = getattr(lib, name + "_batch")
        self._keep = getattr(self, "_keep", []) + [lib]

        def call(count, *arrays):
            out = np.empty((count,) + m.output_shape)
            fn(count, *(ffi.from_buffer("double[]", a) for a in arrays), ffi.from_buffer("double[]", out))
            return out

        return call

    def __call__(self, *args, wrenches=None, gravity=None):
        names = self._joint
        if len(args) != len(names):
            raise InputError(f"compiled {self.kind} takes {len(names)} joint arrays ({', '.join(names)}), "
                             f"got {len(args)}")
        if wrenches is not None and not self._takes_wrenches:
            raise InputError(f"compiled {self.kind} takes no wrenches")
        dtype, batch, a = joint_arrays(self.robot, **dict(zip(names, args)))
        m, call = self._variant(wrenches is not None)
        count = int(np.prod(batch))
        blocks = [np.ascontiguousarray(a[k], dtype=np.float64).reshape(count, -1) for k in names]
        if self._takes_gravity:
            g = self.robot.gravity if gravity is None else gravity
            g = check_array("gravity", g, (3,), batch, np.float64)
            blocks.append(np.ascontiguousarray(g).reshape(count, 3))
        elif gravity is not None:
            raise InputError(f"compiled {self.kind} takes no gravity")
        if wrenches is not None:
            w = check_array("wrenches", wrenches, (self.robot.nf, 6), batch, np.float64)
            blocks.append(np.ascontiguousarray(w).reshape(count, -1))
        out = call(count, *blocks)
        return out.reshape(batch + m.output_shape).astype(dtype, copy=False)

    def __repr__(self) -> str:
        return f"CompiledModel({self.robot.name!r}, {self.kind!r}, parameters={self.parameters!r}, backend={self.backend!r})"


def compile(robot, kind: str = "inverse_dynamics", parameters: str = "standard", backend: str = "c") -> CompiledModel:  # noqa: A001
    """Compile the customized model ``kind`` of ``robot`` (Khalil & Dombre §9.6) into a callable.

    Parameters
    ----------
    robot : Robot
    kind : "inverse_dynamics" | "bias" | "gravity" | "inertia_matrix" | "forward_dynamics" | "regressor"
    parameters : "standard" | "base"
    backend : "c" (compiled with the machine's C compiler, cached) | "numpy" (generated NumPy code)

    Returns
    -------
    CompiledModel
        Called like the numeric function: ``f(q, qd, qdd, wrenches=None, gravity=None)`` for inverse
        dynamics, ``f(q)`` for the inertia matrix, etc.; batched over leading axes, arguments checked,
        float32 in → float32 out (computed in float64).

    Raises
    ------
    CompilerNotFoundError
        When backend="c" and no C compiler exists (message says to install one or use backend="numpy").
    """
    return CompiledModel(robot, kind, parameters, backend)
