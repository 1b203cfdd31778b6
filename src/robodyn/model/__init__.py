"""The robot model: plain, immutable data in Khalil–Kleinfinger notation, its files and converters.

The namespace ``rd.model`` adds the DH-table converters (:func:`from_craig_mdh`, :func:`to_craig_mdh`,
:func:`from_standard_dh`, :func:`to_standard_dh`) and the URDF extras (:func:`mimic_coupling`,
:class:`MimicCoupling`, :func:`urdf_visuals`), imported on first use.
"""

from types import MappingProxyType as _MappingProxyType

from robodyn.lazy import attach as _attach
from robodyn.model.robot import PARAMETER_NAMES, Robot
from robodyn.model.inertia import standard_from_com, com_from_standard, check_physical

_NAMES = _MappingProxyType({
    **{name: ("robodyn.model.dh", name) for name in ("from_craig_mdh", "from_standard_dh", "to_craig_mdh",
                                                      "to_standard_dh")},
    **{name: ("robodyn.model.urdf", name) for name in ("MimicCoupling", "mimic_coupling", "urdf_visuals")},
})

__getattr__, __dir__ = _attach(globals(), _NAMES)
__all__ = ("PARAMETER_NAMES", "Robot", "standard_from_com", "com_from_standard", "check_physical", *_NAMES)
