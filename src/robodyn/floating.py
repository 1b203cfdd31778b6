"""The namespace ``rd.floating``: floating and mobile bases (Pinocchio's free-flyer conventions).

- dynamics: :func:`floating_inverse_dynamics`, :func:`floating_forward_dynamics`, :func:`floating_inertia_matrix`,
  :func:`reduced_inverse_dynamics`, and their derivatives :func:`floating_inverse_dynamics_derivatives`,
  :func:`floating_forward_dynamics_derivatives`;
- contacts and frames: :func:`contact_forward_dynamics`, :func:`wrenches_at_frames`, :func:`floating_jacobian`;
- centroidal quantities: :func:`center_of_mass`, :func:`center_of_mass_jacobian`,
  :func:`centroidal_momentum_matrix`;
- parameters and identification: :func:`floating_regressor`, :func:`floating_parameter_names`,
  :func:`floating_parameter_vector`, :func:`floating_base_parameters`, :func:`identify_from_base`,
  :func:`identify_floating`.

Each name is imported on first use.  See docs/floating-base.md.
"""

from types import MappingProxyType as _MappingProxyType

from robodyn.lazy import attach as _attach

_NAMES = _MappingProxyType({
    **{name: ("robodyn.dynamics.floating", name) for name in (
        "floating_inverse_dynamics", "floating_inertia_matrix", "floating_forward_dynamics", "center_of_mass",
        "center_of_mass_jacobian", "centroidal_momentum_matrix", "floating_jacobian", "wrenches_at_frames",
        "contact_forward_dynamics", "reduced_inverse_dynamics")},
    **{name: ("robodyn.dynamics.derivatives", name) for name in (
        "floating_inverse_dynamics_derivatives", "floating_forward_dynamics_derivatives")},
    **{name: ("robodyn.parameters.floating", name) for name in (
        "floating_regressor", "floating_parameter_names", "floating_parameter_vector", "floating_base_parameters")},
    **{name: ("robodyn.identification.floating", name) for name in ("identify_from_base", "identify_floating")},
})

__getattr__, __dir__ = _attach(globals(), _NAMES)
__all__ = tuple(_NAMES)
