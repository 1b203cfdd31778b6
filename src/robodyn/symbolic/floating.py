"""``rd.compile`` of a floating or mobile base robot: the compiled model of its augmented robot (six virtual joints
at zero, then the robot's joints; :mod:`robodyn.dynamics.floating`), called with free-flyer arrays.

The free-flyer arrays (q (..., n + 7), v and a (..., n + 6), gravity in the world) become the augmented q_a, q̇_a,
q̈_a and g_0 = ^0R_w g by :func:`robodyn.dynamics.floating.augmented_state`.  The virtual accelerations are affine
in a: q̈_a = a + b(v) (docs/floating-base.md, Method), so the forward dynamics of a floating base returns
a = q̈_a − b(v), q̈_a the augmented robot's forward dynamics under τ_a = τ (the virtual joint forces are the base
wrench).
"""

from __future__ import annotations

import inspect
from types import MappingProxyType

import numpy as np

from robodyn.arrays import as_real_array, check_out, working_dtype
from robodyn.dynamics.floating import augmented_robot, augmented_state
from robodyn.errors import InputError
from robodyn.symbolic.models import ALIASES

#: kinds compiled for a moving base (the forward dynamics for a floating base only)
FLOATING_KINDS = ("inverse_dynamics", "inertia_matrix", "forward_dynamics")
#: joint-space arguments of each kind after q
_ARGUMENTS = MappingProxyType({"inverse_dynamics": ("q", "v", "a"), "inertia_matrix": ("q",),
                               "forward_dynamics": ("q", "v", "tau")})


def _host(x):
    """A NumPy array of a CuPy (or other device) array, which the free-flyer conversion reads on the host."""
    return x.get() if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get") else x


class FloatingCompiledModel:
    """Compiled inverse dynamics, inertia matrix or forward dynamics of a floating or mobile base robot
    (module notes).

    ``model`` is the :class:`robodyn.symbolic.CompiledModel` (or, with ``backend="cuda"``, the
    :class:`robodyn.symbolic.cuda.CudaModel`) of ``augmented_robot(robot)``, whose code takes the augmented
    arrays; ``build(augmented_robot, kind)`` makes it (``rd.compile`` passes its own options).  The CUDA kernel
    has no ``wrenches`` argument and returns CuPy arrays; the free-flyer conversion runs in NumPy on the host.
    The C and NumPy models take ``out=`` (keyword): the result's array, checked on entry as the fixed-base
    models' (:func:`robodyn.arrays.check_out`, against the free-flyer arguments), written by the compiled code.
    """

    def __init__(self, robot, kind: str, build, parameters: str = "standard", backend: str = "c"):
        kind = ALIASES.get(kind, kind)
        if kind not in FLOATING_KINDS:
            raise InputError(f"kind = {kind!r}: robot '{robot.name}' has a {robot.base} base; rd.compile makes "
                             f"{', '.join(FLOATING_KINDS)} of a moving base (rd.floating.floating_forward_dynamics "
                             "for the rest)")
        if kind == "forward_dynamics" and robot.base != "floating":
            raise InputError(f"kind = 'forward_dynamics': robot '{robot.name}' has a {robot.base} base; the compiled "
                             "forward dynamics is for a floating base (rd.floating.floating_forward_dynamics(robot, q, "
                             "v, tau, base_acceleration=...) for a mobile one)")
        self.robot, self.kind, self.parameters, self.backend = robot, kind, parameters, backend
        self.model = build(augmented_robot(robot), kind)
        P = inspect.Parameter
        names = _ARGUMENTS[kind] + (() if kind == "inertia_matrix" else
                                    ("gravity",) if backend == "cuda" else ("wrenches", "gravity"))
        self.__signature__ = inspect.Signature(
            [P(k, P.POSITIONAL_OR_KEYWORD, **({} if k in _ARGUMENTS[kind] else {"default": None})) for k in names]
            + ([] if backend == "cuda" else [P("out", P.KEYWORD_ONLY, default=None)]))
        self.__doc__ = f"Compiled {kind} of robot {robot.name} ({robot.base} base, {parameters} parameters, {backend})."

    def __call__(self, *args, **kwargs):
        if self.backend == "cuda" and kwargs.get("out") is not None:
            raise InputError(f"compiled {self.kind} of robot '{self.robot.name}': backend='cuda' takes no argument "
                             "'out' (its results are CuPy arrays); use backend='c' or 'numpy' for out=")
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise InputError(f"compiled {self.kind} of robot '{self.robot.name}' is called as f{self.__signature__}: {e}") from None
        bound.apply_defaults()
        out = bound.arguments.pop("out", None)
        x = {k: _host(v) for k, v in bound.arguments.items()}
        what = f"compiled {self.kind}"
        n6 = self.robot.n + 6
        if self.kind == "inertia_matrix":
            zeros = np.zeros(np.shape(x["q"])[:-1] + (n6,), working_dtype(x["q"]))
            qa, _, _, _ = augmented_state(self.robot, x["q"], zeros, zeros, what=what)
            return self._call(what, x, out, (qa,))
        if self.kind == "forward_dynamics":
            t = np.asarray(x["tau"])
            if t.ndim == 0 or t.shape[-1] != n6:
                raise InputError(f"{what}: argument 'tau' has shape {t.shape}; it must have shape (..., {n6}) "
                                 "[base wrench in R_0, joint torques]")
            # tau has the shape of an acceleration: augmented_state checks it, its q̈_a output is b(v) + tau
            qa, qda, shifted, g = augmented_state(self.robot, x["q"], x["v"], x["tau"], gravity=x["gravity"], what=what)
            tau = np.broadcast_to(np.asarray(x["tau"], dtype=shifted.dtype), shifted.shape)
            bias = shifted - tau  # b(v), module notes
            qdd = self._call(what, x, out, (qa, qda, tau), g, x.get("wrenches"))
            if not isinstance(qdd, np.ndarray):
                return qdd - _device_like(qdd, bias)
            bias = bias.astype(qdd.dtype, copy=False)
            return qdd - bias if out is None else np.subtract(qdd, bias, out=out)
        qa, qda, qdda, g = augmented_state(self.robot, x["q"], x["v"], x["a"], gravity=x["gravity"], what=what)
        return self._call(what, x, out, (qa, qda, qdda), g, x.get("wrenches"))

    def _call(self, what, given, out, joint, g=None, wrenches=None):
        """The augmented robot's compiled function at the augmented arrays ``joint`` (q_a, then q̇_a and q̈_a or
        τ), gravity g in R_0 and the robot's wrenches, written into ``out`` when given: checked here against the
        caller's arrays ``given`` by the fixed-base rules (:func:`robodyn.arrays.check_out`)."""
        if self.backend == "cuda":
            return self.model(*joint) if g is None else self.model(*joint, gravity=g)
        keywords, batch = {}, joint[0].shape[:-1]  # augmented_state broadcasts the states and g to one batch
        if g is not None:
            if wrenches is not None:
                W = as_real_array("wrenches", wrenches)
                if W.ndim < 2 or W.shape[-2:] != (self.robot.nf, 6):
                    raise InputError(f"{what}: argument 'wrenches' has shape {W.shape}; expected (..., {self.robot.nf}, 6)")
                try:
                    batch = np.broadcast_shapes(batch, W.shape[:-2])
                except ValueError:
                    raise InputError(f"{what}: batch axes do not broadcast: q {np.shape(given['q'])}, "
                                     f"wrenches {W.shape}") from None
                W = W.astype(working_dtype(W), copy=False)
                wrenches = np.concatenate([np.zeros(W.shape[:-2] + (6, 6), W.dtype), W], -2)  # the virtual frames carry none
            keywords = dict(wrenches=wrenches, gravity=g)
        if out is not None:
            dtype = working_dtype(*joint, *keywords.values())  # the compiled function's rule, on what it is given
            check_out(what, out, batch + self.model.model.output_shape, dtype,
                      {k: v for k, v in given.items() if v is not None})
        return self.model(*joint, **keywords, out=out)

    def operation_count(self) -> dict:
        """Operations per evaluation of the augmented robot's customized model (docs/symbolic.md)."""
        return (self.model.model if self.backend == "cuda" else self.model).operation_count()

    def __repr__(self) -> str:
        return (f"FloatingCompiledModel({self.robot.name!r}, {self.kind!r}, base={self.robot.base!r}, "
                f"parameters={self.parameters!r}, backend={self.backend!r})")


def _device_like(out, host):
    """``host`` (NumPy) as an array of the library of ``out`` (CuPy), in its dtype."""
    import cupy

    return cupy.asarray(host, dtype=out.dtype)
