"""``rd.compile`` of a floating or mobile base robot: the compiled model of its augmented robot, called with
free-flyer arrays.

The floating-base dynamics are the fixed-base dynamics of the augmented robot (six virtual joints at zero, then
the robot's joints; :mod:`robodyn.dynamics.floating`), so the customized model (Khalil & Dombre §9.6) generated
and compiled is the augmented robot's, unchanged: its C function takes the augmented arrays q_a, q̇_a, q̈_a
(n + 6) with gravity g_0 = ^0R_w g in R_0 as its gravity argument.  This thin wrapper converts the free-flyer
arrays (q (..., n + 7), v and a (..., n + 6), gravity in the world) into them with
:func:`robodyn.dynamics.floating.augmented_state` and returns what the compiled function returns: base wrench
then joint torques, or the (n + 6) × (n + 6) inertia matrix.
"""

from __future__ import annotations

import inspect

import numpy as np

from robodyn.dynamics.floating import augmented_robot, augmented_state
from robodyn.errors import InputError

#: kinds compiled for a moving base
FLOATING_KINDS = ("inverse_dynamics", "inertia_matrix")


class FloatingCompiledModel:
    """Compiled inverse dynamics or inertia matrix of a floating or mobile base robot (module notes).

    ``model`` is the :class:`robodyn.symbolic.CompiledModel` of ``augmented_robot(robot)``, whose C code takes the
    augmented arrays; ``build(augmented_robot, kind)`` makes it (``rd.compile`` passes its own options).
    """

    def __init__(self, robot, kind: str, build, parameters: str = "standard", backend: str = "c"):
        from robodyn.symbolic.models import ALIASES

        kind = ALIASES.get(kind, kind)
        if kind not in FLOATING_KINDS:
            raise InputError(f"kind = {kind!r}: robot '{robot.name}' has a {robot.base} base; rd.compile makes "
                             f"{' and '.join(FLOATING_KINDS)} of a moving base (rd.floating_forward_dynamics for the rest)")
        self.robot, self.kind, self.parameters, self.backend = robot, kind, parameters, backend
        self.model = build(augmented_robot(robot), kind)
        P = inspect.Parameter
        names = ("q", "v", "a", "wrenches", "gravity") if kind == "inverse_dynamics" else ("q",)
        self.__signature__ = inspect.Signature([P(k, P.POSITIONAL_OR_KEYWORD, **({} if k in ("q", "v", "a") else
                                                                                   {"default": None})) for k in names])
        self.__doc__ = f"Compiled {kind} of robot {robot.name} ({robot.base} base, {parameters} parameters, {backend})."

    def __call__(self, *args, **kwargs):
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise InputError(f"compiled {self.kind} of robot '{self.robot.name}' is called as f{self.__signature__}: {e}") from None
        bound.apply_defaults()
        x = bound.arguments
        what = f"compiled {self.kind}"
        if self.kind == "inertia_matrix":
            zeros = np.zeros(np.shape(x["q"])[:-1] + (self.robot.n + 6,))
            qa, _, _, _ = augmented_state(self.robot, x["q"], zeros, zeros, what=what)
            return self.model(qa)
        qa, qda, qdda, g = augmented_state(self.robot, x["q"], x["v"], x["a"], gravity=x["gravity"], what=what)
        wrenches = x["wrenches"]
        if wrenches is not None:
            W = np.asarray(wrenches, dtype=float)
            if W.ndim < 2 or W.shape[-2:] != (self.robot.nf, 6):
                raise InputError(f"{what}: argument 'wrenches' has shape {W.shape}; expected (..., {self.robot.nf}, 6)")
            wrenches = np.concatenate([np.zeros(W.shape[:-2] + (6, 6)), W], -2)  # the virtual frames carry none
        return self.model(qa, qda, qdda, wrenches=wrenches, gravity=g)

    def operation_count(self) -> dict:
        """Operations per evaluation of the augmented robot's customized model (docs/symbolic.md)."""
        return self.model.operation_count()

    def __repr__(self) -> str:
        return (f"FloatingCompiledModel({self.robot.name!r}, {self.kind!r}, base={self.robot.base!r}, "
                f"parameters={self.parameters!r}, backend={self.backend!r})")
