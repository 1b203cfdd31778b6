"""The customized models of every formulation, traced from robodyn's own recursions for the operation counts.

Each model of :data:`MODELS` runs the recursion that also computes robodyn's numbers, traced once with the
recording scalars of :mod:`robodyn.dynamics.trace` into a customized straight-line program: Newton–Euler
(:func:`robodyn.dynamics.newton_euler.rnea_components`), composite links
(:func:`robodyn.dynamics.composite.inertia_entries`), the articulated-body recursion
(:mod:`robodyn.dynamics.recursive`), Mata et al.'s Gibbs–Appell (:mod:`robodyn.dynamics.gibbs_appell`, written in
the forms the authors count) and Kozłowski's spatial operators (:mod:`robodyn.dynamics.spatial_operator`, likewise).
Robot constants are Python floats, so every product or sum of constants (Mata's off-line step 1, Kozłowski's
constant M_k) is done once, before the model runs. ``phase`` (a callable or None) is told the name of each
recursion as it starts, so that a recording can attribute each operation to a row of Kozłowski's Tables 1–2 (or
to a step of Mata et al.'s algorithms).
"""

from __future__ import annotations

from types import MappingProxyType

from robodyn.dynamics.fast import cholesky_components
from robodyn.dynamics.gibbs_appell import forward_components, inertia_components, torque_components
from robodyn.dynamics.spatial_operator import kozlowski_forward, kozlowski_torques
from robodyn.dynamics.trace import record
from robodyn.errors import InputError


# ---- the customized programs of each formulation ---------------------------------------------------------------
#: name → (what it computes, its joint inputs); see :func:`recorded_model`.
MODELS = MappingProxyType({
    "newton_euler": ("inverse dynamics, Newton–Euler (Khalil & Dombre [9.84]–[9.94], robodyn's recursion)",
                     ("q", "qd", "qdd")),
    "gibbs_appell_inverse": ("inverse dynamics, Gibbs–Appell (Mata et al. §4.1)", ("q", "qd", "qdd")),
    "gibbs_appell_bias": ("bias vector C + G, Gibbs–Appell with q̈ = 0 (Mata et al. §3)", ("q", "qd")),
    "gibbs_appell_inertia": ("inertia matrix, Gibbs–Appell Hessian (Mata et al. §4.2)", ("q",)),
    "gibbs_appell_forward": ("forward dynamics, Gibbs–Appell D, bias and Cholesky (Mata et al. Table 3)",
                             ("q", "qd", "tau")),
    "crba_inertia": ("inertia matrix, composite rigid bodies (Khalil & Dombre Appendix 8, robodyn's recursion)",
                     ("q",)),
    "crba_forward": ("forward dynamics, composite rigid bodies + Newton–Euler bias + Cholesky (§9.7.1)",
                     ("q", "qd", "tau")),
    "aba": ("forward dynamics, articulated bodies (Khalil & Dombre §9.7.2, robodyn's recursion)", ("q", "qd", "tau")),
    "kozlowski_inverse": ("inverse dynamics, spatial operators (Kozłowski (3.24)–(3.33))", ("q", "qd", "qdd")),
    "kozlowski_forward": ("forward dynamics, Kalman filter + Bryson–Frazier smoother (Kozłowski (3.46)–(3.58), "
                          "robodyn's recursion)", ("q", "qd", "tau")),
})


def _build(robot, name: str):
    """build(backend, phase, **inputs) of model ``name`` (rigid body: no rotor inertia, no friction)."""
    from robodyn.dynamics import recursive
    from robodyn.dynamics.newton_euler import rnea_components

    g = tuple(float(x) for x in robot.gravity)
    n = robot.n
    if name == "newton_euler":
        return lambda backend, phase, q, qd, qdd: rnea_components(robot, q, qd, qdd, g, backend=backend)
    if name == "gibbs_appell_inverse":
        return lambda backend, phase, q, qd, qdd: torque_components(robot, q, qd, qdd, g, None, backend, phase)
    if name == "gibbs_appell_bias":
        return lambda backend, phase, q, qd: torque_components(robot, q, qd, [0.0] * n, g, None, backend, phase)
    if name == "gibbs_appell_inertia":
        return lambda backend, phase, q: [x for row in inertia_components(robot, q, backend, phase) for x in row]
    if name == "gibbs_appell_forward":
        return lambda backend, phase, q, qd, tau: forward_components(robot, q, qd, tau, g, None, backend, phase)
    if name == "crba_inertia":
        return lambda backend, phase, q: [x for row in _crba(robot, q, backend) for x in row]
    if name == "crba_forward":
        def crba_forward(backend, phase, q, qd, tau):
            phase("inertia matrix")
            A = _crba(robot, q, backend)
            phase("bias vector")
            bias = rnea_components(robot, q, qd, [0.0] * n, g, backend=backend)
            phase("Cholesky factorisation and solve")
            return cholesky_components(A, [t - c for t, c in zip(tau, bias)], check=False)
        return crba_forward
    if name == "aba":
        return lambda backend, phase, q, qd, tau: recursive.aba_components(robot, q, qd, tau, g, backend=backend)
    if name == "kozlowski_inverse":
        return lambda backend, phase, q, qd, qdd: kozlowski_torques(robot, q, qd, qdd, g, backend=backend, phase=phase)
    if name == "kozlowski_forward":
        return lambda backend, phase, q, qd, tau: kozlowski_forward(robot, q, qd, tau, g, backend=backend, phase=phase)
    raise InputError(f"model = {name!r}; choose one of {', '.join(MODELS)}")


def _crba(robot, q, backend):
    from robodyn.dynamics.composite import inertia_entries

    A = [[0.0] * robot.n for _ in range(robot.n)]
    for (i, j), value in inertia_entries(robot, q, backend):
        A[i][j] = A[j][i] = value
    return A


def recorded_model(robot, name: str):
    """The customized straight-line program of model ``name`` (a key of :data:`MODELS`) for ``robot``.

    The robot's rotor inertias and friction are ignored (the published counts have neither): the program
    computes the rigid-body model. Returns a :class:`robodyn.dynamics.trace.Recorded`; its ``count()`` gives
    the operations, ``count_by_phase()`` the operations per recursion, ``evaluate(q=..., ...)`` the values.
    """
    from robodyn.model.robot import check_robot

    check_robot(robot)
    if name not in MODELS:
        raise InputError(f"model = {name!r}; choose one of {', '.join(MODELS)}")
    rigid = robot.replace(Ia=None, Fc=None, Fv=None, Foff=None, Fst=None)
    return record(_build(rigid, name), {k: robot.n for k in MODELS[name][1]})
