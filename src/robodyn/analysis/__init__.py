"""Analysis of the dynamic model: structural properties, inertial couplings, bounds on dynamic terms,
numerical accuracy of the direct-dynamics methods (``robodyn.analysis.accuracy``).

Khalil & Dombre §9.3.3.3 and De Luca, "Dynamic model of robots: analysis, properties, extensions, uses".
"""

from robodyn.analysis.bounds import BoundEstimates, dynamic_bounds
from robodyn.analysis.bounds import polynomial_bounds
from robodyn.analysis.coupling import CouplingStructure, inertial_couplings
from robodyn.analysis.properties import (
    InertiaCheck,
    PassivityCheck,
    SkewCheck,
    check_inertia_matrix,
    check_passivity,
    check_skew_symmetry,
)

__all__ = (
    "BoundEstimates", "dynamic_bounds",
    "polynomial_bounds",
    "CouplingStructure", "inertial_couplings",
    "InertiaCheck", "PassivityCheck", "SkewCheck", "check_inertia_matrix", "check_passivity", "check_skew_symmetry",
)
