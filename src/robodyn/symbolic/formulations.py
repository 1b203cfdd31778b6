"""The customized models of every formulation, traced from robodyn's own recursions for the operation counts.

Each model of :data:`MODELS` runs the recursion that also computes robodyn's numbers
(:func:`robodyn.symbolic.models.recursion`, the one that :func:`robodyn.customized_model` traces too), traced once
with the recording scalars of :mod:`robodyn.dynamics.trace` into a customized straight-line program: Newton–Euler
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

from robodyn.dynamics.trace import record
from robodyn.errors import InputError
from robodyn.model.robot import check_robot
from robodyn.symbolic.models import recursion


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


#: model → (kind, method) of :func:`robodyn.symbolic.models.recursion`, the recursion it records.
_RECURSIONS = MappingProxyType({
    "newton_euler": ("inverse_dynamics", "newton_euler"), "gibbs_appell_inverse": ("inverse_dynamics", "gibbs_appell"),
    "gibbs_appell_bias": ("inverse_dynamics", "gibbs_appell"), "gibbs_appell_inertia": ("inertia_matrix", "gibbs_appell"),
    "gibbs_appell_forward": ("forward_dynamics", "gibbs_appell"), "crba_inertia": ("inertia_matrix", "composite"),
    "crba_forward": ("forward_dynamics", "cholesky"), "aba": ("forward_dynamics", "recursive"),
    "kozlowski_inverse": ("inverse_dynamics", "spatial_operator"),
    "kozlowski_forward": ("forward_dynamics", "spatial_operator"),
})


def recorded_model(robot, name: str):
    """The customized straight-line program of model ``name`` (a key of :data:`MODELS`) for ``robot``.

    The robot's rotor inertias and friction are ignored (the published counts have neither): the program
    computes the rigid-body model. Returns a :class:`robodyn.dynamics.trace.Recorded`; its ``count()`` gives
    the operations, ``count_by_phase()`` the operations per recursion, ``evaluate(q=..., ...)`` the values.
    """
    check_robot(robot)
    if name not in MODELS:
        raise InputError(f"model = {name!r}; choose one of {', '.join(MODELS)}")
    rigid = robot.replace(Ia=None, Fc=None, Fv=None, Foff=None, Fst=None)
    kind, method = _RECURSIONS[name]
    g = tuple(float(x) for x in robot.gravity)

    def build(backend, phase, **x):
        return recursion(rigid, kind, method, backend, x, g, phase=phase)

    return record(build, {k: robot.n for k in MODELS[name][1]})
