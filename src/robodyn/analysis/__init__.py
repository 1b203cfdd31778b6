"""Analysis of the dynamic model: structural properties, inertial couplings, bounds on dynamic terms,
numerical accuracy of the direct-dynamics methods (``robodyn.analysis.accuracy``).

Khalil & Dombre §9.3.3.3 and De Luca, "Dynamic model of robots: analysis, properties, extensions, uses".

The namespace ``rd.analysis`` also holds, imported on first use, the accuracy study of the direct-dynamics
methods (:func:`accuracy_study`), the operation counts (:func:`opcount_report`) and gravity balancing by counter
masses and springs (:func:`counter_masses`, :func:`spring_balance`, :func:`spring_torques`).
"""

from types import MappingProxyType as _MappingProxyType

from robodyn.lazy import attach as _attach
from robodyn.analysis.bounds import BoundEstimates, dynamic_bounds, polynomial_bounds
from robodyn.analysis.coupling import CouplingStructure, inertial_couplings
from robodyn.analysis.properties import (InertiaCheck, PassivityCheck, SkewCheck, check_inertia_matrix,
                                         check_passivity, check_skew_symmetry)

_NAMES = _MappingProxyType({
    "accuracy_study": ("robodyn.analysis.accuracy", "accuracy_study"),
    "opcount_report": ("robodyn.analysis.opcount", "opcount_report"),
    **{name: ("robodyn.analysis.balancing", name) for name in ("counter_masses", "spring_balance", "spring_torques")},
})

__getattr__, __dir__ = _attach(globals(), _NAMES)
__all__ = (
    "BoundEstimates", "dynamic_bounds", "polynomial_bounds", "CouplingStructure", "inertial_couplings",
    "InertiaCheck", "PassivityCheck", "SkewCheck", "check_inertia_matrix", "check_passivity", "check_skew_symmetry",
    *_NAMES,
)
