"""Base inertial parameters (Khalil & Dombre §9.4) laid out for the customizing engine (§9.6.3).

Each base parameter takes the place of the standard parameter whose column of D it keeps (XXR2 in place
of XX2, ...); eliminated and grouped-away parameters become zeros, so the customized model drops them.
"""

from __future__ import annotations

from types import MappingProxyType
import numpy as np

from robodyn.model.robot import PARAMETER_NAMES

_COLUMNS = MappingProxyType({p: k for k, p in enumerate(PARAMETER_NAMES + ("Ia",))})


def base_inertia(robot, symbolic_geometry: bool = False):
    """(values (nf, 11), names (nf, 11)) of the base parameters, laid out for
    :func:`robodyn.symbolic.customize.constants`.

    Base parameters whose value is exactly 0 become zeros in the customized model, so a robot with the
    zeros of Example 9.3 gets the model of Table 9.4's parameters.  ``drop_zero=True`` is not used: it
    also drops a grouped parameter whose own standard parameter is 0 (MYR4 = MY4 − MZ5 with MY4 = 0 for
    the built-in rx90), which would lose the MZ5 term.
    """
    from robodyn.parameters import base_parameters

    bp = base_parameters(robot, method="symbolic", symbolic_geometry=symbolic_geometry, friction=False)
    values = np.zeros((robot.nf, 11))
    names = [[f"{p}{j}" for p in PARAMETER_NAMES + ("IA",)] for j in range(1, robot.nf + 1)]
    for name, std, value in zip(bp.names, bp.standard, bp.values):
        head = std.rstrip("0123456789")
        j = int(std[len(head):])
        values[j - 1, _COLUMNS[head]] = value
        names[j - 1][_COLUMNS[head]] = name.replace("Ia", "IA", 1) if name.startswith("Ia") else name
    return values, names
