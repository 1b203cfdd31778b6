"""robodyn — dynamics of robot manipulators in Khalil–Kleinfinger notation.

Quick use::

    import robodyn as rd
    robot = rd.load("rx90")
    tau = rd.inverse_dynamics(robot, q, qd, qdd)

The top level holds what a user reaches for: the robot and its files, kinematics, the dynamic model, derivatives,
the regressor and base parameters, ``compile``, ``identify``, ``simulate``, ``view``.  The rest lives in namespaces:

=====================  ================================================================================
``rd.model``           DH-table converters (Craig, standard DH), URDF mimic joints and meshes
``rd.kinematics``      the forward recursions of frames, velocities and accelerations
``rd.dynamics``        the complete model (Christoffel symbols, Ȧ), elastic joints, motors and
                       transmissions, task space, coordinate changes, momentum form, collision observer
``rd.parameters``      the energy functions, λ matrices, standard parameter vectors and names
``rd.identification``  gravity calibration (Dellin), excitation, data preparation, physical fits, payloads
``rd.floating``        floating and mobile bases: dynamics, contacts, centroidal quantities, identification
``rd.closed_chain``    closed kinematic chains: loop closures, five-bar linkages, reduced dynamics
``rd.simulation``      trajectories, time scaling, optimal motion, momentum-form simulation, PUMA study
``rd.analysis``        properties, couplings, bounds, accuracy study, operation counts, balancing
``rd.control``         controllers for :func:`simulate`
``rd.friction_models`` friction laws for simulation
``rd.symbolic``        customized symbolic models and code generation
``rd.plot``            figures (Matplotlib)
``rd.viewer``          the 3-D web viewer and animations
``rd.distributed``     Dask: many simulations, identification from data on a cluster
``rd.logs``            joint logs (ROS bags, CSV, HDF5, Parquet) and standstill detection
``rd.interop``         Pinocchio and MuJoCo models
``rd.errors``          the exceptions (the common ones are also at the top level)
=====================  ================================================================================

Every name is imported on first use (PEP 562): ``import robodyn`` itself imports nothing heavy, and the dynamic
model does not bring in SciPy, SymPy, Matplotlib or cvxpy.  A name that moved from the top level into a namespace still works for one release,
with a :class:`DeprecationWarning` that names its new place.
"""

from types import MappingProxyType as _MappingProxyType

from robodyn.lazy import attach as _attach
from robodyn.version import __version__

#: The public names: name -> (module, attribute); attribute None for a namespace (a module).
_PUBLIC = _MappingProxyType({
    # errors
    "RobodynError": ("robodyn.errors", "RobodynError"),
    "InputError": ("robodyn.errors", "InputError"),
    "ModelError": ("robodyn.errors", "ModelError"),
    "ModelFileError": ("robodyn.errors", "ModelFileError"),
    "NonPhysicalInertiaError": ("robodyn.errors", "NonPhysicalInertiaError"),
    "NumericOverflowError": ("robodyn.errors", "NumericOverflowError"),
    "UnknownRobotError": ("robodyn.errors", "UnknownRobotError"),
    # the robot and its files
    "Robot": ("robodyn.model.robot", "Robot"),
    "PARAMETER_NAMES": ("robodyn.model.robot", "PARAMETER_NAMES"),
    "with_parameters": ("robodyn.model.robot", "with_parameters"),
    "standard_from_com": ("robodyn.model.inertia", "standard_from_com"),
    "com_from_standard": ("robodyn.model.inertia", "com_from_standard"),
    "load": ("robodyn.model.io", "load"),
    "loads": ("robodyn.model.io", "loads"),
    "save": ("robodyn.model.io", "save"),
    "dumps": ("robodyn.model.io", "dumps"),
    "list_robots": ("robodyn.model.io", "list_robots"),
    "from_urdf": ("robodyn.model.urdf", "from_urdf"),
    "from_mjcf": ("robodyn.model.mjcf", "from_mjcf"),
    "to_urdf": ("robodyn.model.urdf", "to_urdf"),
    # kinematics
    "forward_kinematics": ("robodyn.kinematics", "forward_kinematics"),
    "jacobian": ("robodyn.kinematics", "jacobian"),
    "jacobian_dot_qd": ("robodyn.kinematics", "jacobian_dot_qd"),
    "link_velocities": ("robodyn.kinematics", "link_velocities"),
    "link_accelerations": ("robodyn.kinematics", "link_accelerations"),
    # the dynamic model
    "inverse_dynamics": ("robodyn.dynamics.api", "inverse_dynamics"),
    "forward_dynamics": ("robodyn.dynamics.api", "forward_dynamics"),
    "inertia_matrix": ("robodyn.dynamics.api", "inertia_matrix"),
    "state_derivative": ("robodyn.dynamics.api", "state_derivative"),
    "gravity_torques": ("robodyn.dynamics.newton_euler", "gravity_torques"),
    "bias_torques": ("robodyn.dynamics.newton_euler", "bias_torques"),
    "friction_torques": ("robodyn.dynamics.newton_euler", "friction_torques"),
    "coriolis_matrix": ("robodyn.dynamics.lagrange", "coriolis_matrix"),
    "kinetic_energy": ("robodyn.dynamics.lagrange", "kinetic_energy"),
    "potential_energy": ("robodyn.dynamics.lagrange", "potential_energy"),
    "inverse_dynamics_derivatives": ("robodyn.dynamics.derivatives", "inverse_dynamics_derivatives"),
    "forward_dynamics_derivatives": ("robodyn.dynamics.derivatives", "forward_dynamics_derivatives"),
    "linearize": ("robodyn.dynamics.derivatives", "linearize"),
    "inverse_dynamics_second_derivatives": ("robodyn.dynamics.derivatives", "inverse_dynamics_second_derivatives"),
    "discretize": ("robodyn.dynamics.discrete", "discretize"),
    "step": ("robodyn.simulation.step", "step"),
    # base parameters, symbolic models, identification, simulation
    "regressor": ("robodyn.parameters", "regressor"),
    "base_parameters": ("robodyn.parameters", "base_parameters"),
    "BaseParameters": ("robodyn.parameters", "BaseParameters"),
    "compile": ("robodyn.symbolic", "compile"),
    "CompiledModel": ("robodyn.symbolic", "CompiledModel"),
    "customized_model": ("robodyn.symbolic", "customized_model"),
    "identify": ("robodyn.identification.dynamic", "identify"),
    "Identification": ("robodyn.identification.results", "Identification"),
    "excitation_trajectory": ("robodyn.identification.excitation", "excitation_trajectory"),
    "read_joint_log": ("robodyn.logs", "read_joint_log"),
    "simulate": ("robodyn.simulation", "simulate"),
    "inverse_kinematics": ("robodyn.simulation", "inverse_kinematics"),
    # seeing the robot, other libraries
    "view": ("robodyn.viewer", "view"),
    "animate": ("robodyn.viewer", "animate"),
    "to_pinocchio": ("robodyn.interop", "to_pinocchio"),
    "to_mujoco_xml": ("robodyn.interop", "to_mujoco_xml"),
    "to_casadi": ("robodyn.symbolic.casadi_model", "to_casadi"),
    # namespaces
    "model": ("robodyn.model", None),
    "kinematics": ("robodyn.kinematics", None),
    "dynamics": ("robodyn.dynamics", None),
    "parameters": ("robodyn.parameters", None),
    "identification": ("robodyn.identification", None),
    "floating": ("robodyn.floating", None),
    "closed_chain": ("robodyn.closed_chain", None),
    "simulation": ("robodyn.simulation", None),
    "analysis": ("robodyn.analysis", None),
    "control": ("robodyn.control", None),
    "friction_models": ("robodyn.dynamics.friction_models", None),
    "symbolic": ("robodyn.symbolic", None),
    "plot": ("robodyn.plot", None),
    "viewer": ("robodyn.viewer", None),
    "distributed": ("robodyn.distributed", None),
    "logs": ("robodyn.logs", None),
    "interop": ("robodyn.interop", None),
    "errors": ("robodyn.errors", None),
})

#: Former top-level names, by the namespace that holds them now (deprecated aliases, for one release).
_MOVED_TO = _MappingProxyType({
    "robodyn.model": ("from_craig_mdh", "from_standard_dh", "to_craig_mdh", "to_standard_dh", "MimicCoupling",
                      "mimic_coupling", "urdf_visuals"),
    "robodyn.dynamics": (
        "christoffel_symbols", "inertia_matrix_derivative",
        "ElasticRobot", "elastic_energy", "elastic_forward_dynamics", "elastic_inverse_dynamics",
        "elastic_motor_torques", "elastic_state_derivative",
        "Transmission", "actuator_torques", "end_effector_torques", "joint_from_motor", "joint_torques_from_motor",
        "load_transmission", "motor_forward_dynamics", "motor_from_joint", "motor_inertia_matrix",
        "motor_inverse_dynamics", "transmission_torques",
        "task_space_dynamics", "null_space_dynamics", "jacobian_derivative", "SingularConfigurationError",
        "transform_dynamics", "transformed_factorization",
        "momentum_state", "momentum_state_derivative", "velocity_state", "momentum_observer", "generalized_momentum"),
    "robodyn.parameters": ("energy_functions", "lambda_matrix", "standard_parameter_names",
                           "standard_parameter_vector"),
    "robodyn.identification": (
        "GravityCalibration", "LockedBodyInertia", "LinkInertias", "calibrate_gravity", "calibration_poses",
        "first_moments", "gravity_parameter_structure", "gravity_regressor", "identify_locked_inertia",
        "identify_locked_body", "identify_link_inertias", "load_gravity_calibration", "locked_body_inertia",
        "wam_gravity_study", "ExcitationTrajectory", "IdentificationData", "prepare_identification_data",
        "IdentificationError", "pseudo_inertia", "physical_fit", "PhysicalFit", "EssentialParameters",
        "essential_parameters", "Payload", "identify_payload", "DriveGains", "identify_drive_gains"),
    "robodyn.floating": (
        "floating_inverse_dynamics", "floating_inertia_matrix", "floating_forward_dynamics", "center_of_mass",
        "center_of_mass_jacobian", "centroidal_momentum_matrix", "floating_jacobian", "wrenches_at_frames",
        "contact_forward_dynamics", "reduced_inverse_dynamics", "floating_inverse_dynamics_derivatives",
        "floating_forward_dynamics_derivatives", "floating_regressor", "floating_parameter_names",
        "floating_parameter_vector", "floating_base_parameters", "identify_from_base", "identify_floating"),
    "robodyn.closed_chain": (
        "ClosedChainRobot", "LoopClosure", "LoopClosureError", "load_closed_chain", "close_loops",
        "closed_chain_inverse_dynamics", "closed_chain_forward_dynamics", "closed_chain_model", "planar_five_bar",
        "spatial_five_bar"),
    "robodyn.simulation": (
        "RestToRest", "Trapezoidal", "Spline", "FourierSeries", "time_scale", "time_optimal",
        "InfeasibleLimitsError", "optimal_motion", "OptimizationError", "simulate_momentum", "puma_line_study"),
    "robodyn.analysis": ("accuracy_study", "opcount_report", "counter_masses", "spring_balance", "spring_torques"),
    "robodyn.logs": ("standstill_poses",),
    "robodyn.distributed": ("simulate_many",),
})
_MOVED = _MappingProxyType({name: namespace for namespace, names in _MOVED_TO.items() for name in names})

__getattr__, __dir__ = _attach(globals(), _PUBLIC, _MOVED, submodules=True)

# `from robodyn import *` leaves the builtin compile alone.
__all__ = tuple(name for name in _PUBLIC if name != "compile")
