"""``rd.to_casadi(robot, kind)``: the customized model of Khalil & Dombre §9.6 (the program the C, CUDA and JAX
back ends compile) as a ``casadi.Function`` of SX expressions, for CasADi and acados (docs/derivatives.md §4).
"""

from __future__ import annotations

from robodyn.errors import InputError, RobodynError
from robodyn.model.robot import check_robot
from robodyn.sanitize import identifier
from robodyn.symbolic.codegen import casadi_code
from robodyn.symbolic.models import canonical_kind, customized_model

#: the kinds of :func:`to_casadi`, each the numeric function of that name
KINDS = ("inverse_dynamics", "forward_dynamics", "inertia_matrix", "gravity_torques", "bias_torques")


class CasadiUnavailableError(RobodynError):
    """CasADi is missing: install ``robodyn[casadi]``."""


def to_casadi(robot, kind: str = "inverse_dynamics", friction: bool = True):
    """The model ``kind`` of ``robot`` as a ``casadi.Function`` of symbolic inputs.

    ========================  ====================  =====================================================
    kind                      inputs (each (n,))    output
    ========================  ====================  =====================================================
    ``"inverse_dynamics"``    q, qd, qdd            Γ = A(q) q̈ + H(q, q̇)  [9.84]–[9.95], (n, 1)
    ``"forward_dynamics"``    q, qd, tau            q̈ = A⁻¹(Γ − H)  [9.96], (n, 1)
    ``"inertia_matrix"``      q                     A(q)  [9.97]–[9.99], (n, n)
    ``"gravity_torques"``     q                     Q(q), (n, 1)
    ``"bias_torques"``        q, qd                 H(q, q̇) = C q̇ + Q + Γ_f  [9.95], (n, 1)
    ========================  ====================  =====================================================

    The inputs are named as in the table (``f(q=..., qd=..., qdd=...)`` works) and the output as the kind;
    units are those of the numeric functions (rad | m, N m | N). Friction is the robot's [9.26]–[9.28]
    (Coulomb through ``casadi.sign``) unless ``friction=False``. Forward dynamics is the customized direct
    model (Khalil & Dombre's recursive algorithm); at a configuration where the model is singular (a joint
    that moves only massless links) it gives inf or NaN instead of robodyn's error: CasADi cannot raise.

    Parameters
    ----------
    robot : Robot (fixed base)
    kind : one of :data:`KINDS` or an alias (``"idm"``, ``"ddm"``, ``"inm"``, ``"gravity"``, ``"bias"``)
    friction : bool

    Returns
    -------
    casadi.Function

    Raises
    ------
    CasadiUnavailableError
        CasADi is not installed (``pip install 'robodyn[casadi]'``).
    InputError
        An unknown kind, a robot that is not a fixed-base Robot.
    """
    check_robot(robot)
    kind = canonical_kind(kind, KINDS)
    if not isinstance(friction, bool):
        raise InputError(f"friction = {friction!r}; give True (the robot's own friction) or False")
    if robot.base != "fixed":
        raise InputError(f"to_casadi: robot '{robot.name}' has a {robot.base} base; the customized models are "
                         "those of fixed-base robots")
    try:
        import casadi  # noqa: F401 (its presence is what is checked here)
    except ImportError:
        raise CasadiUnavailableError("rd.to_casadi needs CasADi: pip install 'robodyn[casadi]'") from None
    model = customized_model(robot, kind, friction=friction)
    return casadi_code.function(model, identifier(f"{robot.name}_{kind}"))
