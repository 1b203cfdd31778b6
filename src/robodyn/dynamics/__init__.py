"""Numeric dynamic algorithms, one module per formulation; the namespace ``rd.dynamics`` of the complete and
extended models.

The top level ``robodyn`` holds the model itself (``inverse_dynamics``, ``forward_dynamics``, ``inertia_matrix``,
``gravity_torques``, ``coriolis_matrix``, ...).  Here:

- the complete model: :func:`christoffel_symbols`, :func:`inertia_matrix_derivative` (Khalil & Dombre §9.3);
- elastic joints (De Luca): :class:`ElasticRobot` and the ``elastic_*`` functions;
- motors and transmissions: :class:`Transmission`, ``motor_*``, ``joint_*``, :func:`actuator_torques`,
  :func:`end_effector_torques`, :func:`transmission_torques`, :func:`load_transmission`;
- task space (Khatib): :func:`task_space_dynamics`, :func:`null_space_dynamics`, :func:`jacobian_derivative`, and
  task maps beyond rows of the geometric Jacobian: :class:`RelativePosition`, :class:`OrientationError`;
- a change of coordinates: :func:`transform_dynamics`, :func:`transformed_factorization`;
- the momentum form: :func:`momentum_state`, :func:`momentum_state_derivative`, :func:`velocity_state`;
- collision detection (De Luca): :func:`generalized_momentum`, :func:`momentum_observer`;
- kinematic derivatives: :func:`kinematic_hessian` (∂J/∂q), :func:`frame_velocity_derivatives`,
  :func:`frame_acceleration_derivatives`;
- a fixed-base robot in rigid contact: :func:`constrained_forward_dynamics`.

Each name is imported on first use, so importing one formulation module does not import the others.
"""

from types import MappingProxyType as _MappingProxyType

from robodyn.lazy import attach as _attach

_NAMES = _MappingProxyType({
    **{name: ("robodyn.dynamics.lagrange", name) for name in ("christoffel_symbols", "inertia_matrix_derivative")},
    **{name: ("robodyn.dynamics.elastic", name) for name in (
        "ElasticRobot", "elastic_energy", "elastic_forward_dynamics", "elastic_inverse_dynamics",
        "elastic_motor_torques", "elastic_state_derivative")},
    **{name: ("robodyn.dynamics.transmission", name) for name in (
        "Transmission", "actuator_torques", "end_effector_torques", "joint_from_motor", "joint_torques_from_motor",
        "load_transmission", "motor_forward_dynamics", "motor_from_joint", "motor_inertia_matrix",
        "motor_inverse_dynamics", "transmission_torques")},
    **{name: ("robodyn.dynamics.task_space", name) for name in (
        "task_space_dynamics", "null_space_dynamics", "jacobian_derivative", "SingularConfigurationError",
        "RelativePosition", "OrientationError")},
    **{name: ("robodyn.dynamics.coordinates", name) for name in ("transform_dynamics", "transformed_factorization")},
    **{name: ("robodyn.dynamics.momentum", name) for name in (
        "momentum_state", "momentum_state_derivative", "velocity_state")},
    **{name: ("robodyn.dynamics.derivatives", name) for name in ("generalized_momentum", "momentum_observer")},
    **{name: ("robodyn.dynamics.kinematic_derivatives", name) for name in (
        "kinematic_hessian", "frame_velocity_derivatives", "frame_acceleration_derivatives")},
    "constrained_forward_dynamics": ("robodyn.dynamics.contact", "constrained_forward_dynamics"),
})

__getattr__, __dir__ = _attach(globals(), _NAMES)
__all__ = tuple(_NAMES)
