"""robodyn — dynamics of robot manipulators in Khalil–Kleinfinger notation.

Quick use::

    import robodyn as rd
    robot = rd.load("rx90")
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
"""

from types import MappingProxyType as _MappingProxyType

from robodyn.errors import (
    InputError,
    NumericOverflowError,
    ModelError,
    ModelFileError,
    NonPhysicalInertiaError,
    RobodynError,
    UnknownRobotError,
)
from robodyn.model import PARAMETER_NAMES, Robot, com_from_standard, standard_from_com
from robodyn.model.io import dumps, list_robots, load, loads, save
from robodyn.model.robot import with_parameters
from robodyn.kinematics import (
    forward_kinematics,
    jacobian,
    jacobian_dot_qd,
    link_accelerations,
    link_velocities,
)
from robodyn.dynamics.newton_euler import bias_torques, friction_torques, gravity_torques
from robodyn.dynamics.api import forward_dynamics, inertia_matrix, inverse_dynamics

# --- complete dynamic model: Lagrange form, energies, state equation ---
from robodyn.dynamics.lagrange import (
    christoffel_symbols,
    coriolis_matrix,
    inertia_matrix_derivative,
    kinetic_energy,
    potential_energy,
)
from robodyn.dynamics.api import state_derivative

# --- extended models (elastic joints, motors and transmissions, end-effector wrench) and analysis ---
from robodyn.dynamics.elastic import (
    ElasticRobot,
    elastic_energy,
    elastic_forward_dynamics,
    elastic_inverse_dynamics,
    elastic_motor_torques,
    elastic_state_derivative,
)
from robodyn.dynamics.transmission import (
    Transmission,
    actuator_torques,
    end_effector_torques,
    joint_from_motor,
    joint_torques_from_motor,
    load_transmission,
    motor_forward_dynamics,
    motor_from_joint,
    motor_inertia_matrix,
    motor_inverse_dynamics,
    transmission_torques,
)
from robodyn import analysis

# --- robots: DH table converters (Craig modified DH, standard DH) ---
from robodyn.model.dh import from_craig_mdh, from_standard_dh, to_craig_mdh, to_standard_dh
# --- heavier parts (sympy, scipy.integrate) are imported on first use, so `import robodyn` and the CLI stay quick ---
_LAZY = _MappingProxyType({
    # symbolic: customized models and code generation
    "symbolic": ("robodyn.symbolic", None),
    "CompiledModel": ("robodyn.symbolic", "CompiledModel"),
    "compile": ("robodyn.symbolic", "compile"),
    "customized_model": ("robodyn.symbolic", "customized_model"),
    "to_casadi": ("robodyn.symbolic.casadi_model", "to_casadi"),
    # base parameters: regressor, energy functions, base inertial parameters
    "parameters": ("robodyn.parameters", None),
    "BaseParameters": ("robodyn.parameters", "BaseParameters"),
    "base_parameters": ("robodyn.parameters", "base_parameters"),
    "energy_functions": ("robodyn.parameters", "energy_functions"),
    "lambda_matrix": ("robodyn.parameters", "lambda_matrix"),
    "regressor": ("robodyn.parameters", "regressor"),
    "standard_parameter_names": ("robodyn.parameters", "standard_parameter_names"),
    "standard_parameter_vector": ("robodyn.parameters", "standard_parameter_vector"),
    # studies: numerical accuracy, simulation (inverse kinematics, integration), operation counts
    "accuracy_study": ("robodyn.analysis.accuracy", "accuracy_study"),
    "opcount_report": ("robodyn.analysis.opcount", "opcount_report"),
    "simulation": ("robodyn.simulation", None),
    "inverse_kinematics": ("robodyn.simulation", "inverse_kinematics"),
    "puma_line_study": ("robodyn.simulation", "puma_line_study"),
    "simulate": ("robodyn.simulation", "simulate"),
    # identification: gravity-compensation calibration (Dellin)
    "identification": ("robodyn.identification", None),
    "GravityCalibration": ("robodyn.identification", "GravityCalibration"),
    "LockedBodyInertia": ("robodyn.identification", "LockedBodyInertia"),
    "calibrate_gravity": ("robodyn.identification", "calibrate_gravity"),
    "calibration_poses": ("robodyn.identification", "calibration_poses"),
    "first_moments": ("robodyn.identification", "first_moments"),
    "gravity_parameter_structure": ("robodyn.identification", "gravity_parameter_structure"),
    "gravity_regressor": ("robodyn.identification", "gravity_regressor"),
    "identify_locked_inertia": ("robodyn.identification", "identify_locked_inertia"),
    "identify_locked_body": ("robodyn.identification", "identify_locked_body"),
    "identify_link_inertias": ("robodyn.identification", "identify_link_inertias"),
    "LinkInertias": ("robodyn.identification", "LinkInertias"),
    "load_gravity_calibration": ("robodyn.identification", "load_gravity_calibration"),
    "locked_body_inertia": ("robodyn.identification", "locked_body_inertia"),
    "wam_gravity_study": ("robodyn.identification", "wam_gravity_study"),
    # dynamic identification
    "ExcitationTrajectory": ("robodyn.identification.excitation", "ExcitationTrajectory"),
    "excitation_trajectory": ("robodyn.identification.excitation", "excitation_trajectory"),
    "IdentificationData": ("robodyn.identification.data", "IdentificationData"),
    "prepare_identification_data": ("robodyn.identification.data", "prepare_identification_data"),
    "Identification": ("robodyn.identification.dynamic", "Identification"),
    "IdentificationError": ("robodyn.identification.dynamic", "IdentificationError"),
    "identify": ("robodyn.identification.dynamic", "identify"),
    "pseudo_inertia": ("robodyn.identification.dynamic", "pseudo_inertia"),
    "physical_fit": ("robodyn.identification.dynamic", "physical_fit"),
    "PhysicalFit": ("robodyn.identification.dynamic", "PhysicalFit"),
    "EssentialParameters": ("robodyn.identification.dynamic", "EssentialParameters"),
    "essential_parameters": ("robodyn.identification.dynamic", "essential_parameters"),
    "Payload": ("robodyn.identification.payload", "Payload"),
    "identify_payload": ("robodyn.identification.payload", "identify_payload"),
    "DriveGains": ("robodyn.identification.payload", "DriveGains"),
    "identify_drive_gains": ("robodyn.identification.payload", "identify_drive_gains"),
    # trajectories, time scaling, optimal motion, task space, coordinates, closed chains
    "RestToRest": ("robodyn.simulation.trajectories", "RestToRest"),
    "Trapezoidal": ("robodyn.simulation.trajectories", "Trapezoidal"),
    "Spline": ("robodyn.simulation.trajectories", "Spline"),
    "FourierSeries": ("robodyn.simulation.trajectories", "FourierSeries"),
    "time_scale": ("robodyn.simulation.time_scaling", "time_scale"),
    "time_optimal": ("robodyn.simulation.time_scaling", "time_optimal"),
    "InfeasibleLimitsError": ("robodyn.simulation.time_scaling", "InfeasibleLimitsError"),
    "task_space_dynamics": ("robodyn.dynamics.task_space", "task_space_dynamics"),
    "null_space_dynamics": ("robodyn.dynamics.task_space", "null_space_dynamics"),
    "jacobian_derivative": ("robodyn.dynamics.task_space", "jacobian_derivative"),
    "SingularConfigurationError": ("robodyn.dynamics.task_space", "SingularConfigurationError"),
    "transform_dynamics": ("robodyn.dynamics.coordinates", "transform_dynamics"),
    "transformed_factorization": ("robodyn.dynamics.coordinates", "transformed_factorization"),
    "momentum_state": ("robodyn.dynamics.momentum", "momentum_state"),
    "momentum_state_derivative": ("robodyn.dynamics.momentum", "momentum_state_derivative"),
    "velocity_state": ("robodyn.dynamics.momentum", "velocity_state"),
    "simulate_momentum": ("robodyn.simulation.momentum", "simulate_momentum"),
    "counter_masses": ("robodyn.analysis.balancing", "counter_masses"),
    "planar_five_bar": ("robodyn.model.five_bar", "planar_five_bar"),
    "spatial_five_bar": ("robodyn.model.five_bar", "spatial_five_bar"),
    "spring_balance": ("robodyn.analysis.balancing", "spring_balance"),
    "spring_torques": ("robodyn.analysis.balancing", "spring_torques"),
    "optimal_motion": ("robodyn.simulation.optimal", "optimal_motion"),
    "OptimizationError": ("robodyn.simulation.optimal", "OptimizationError"),
    "ClosedChainRobot": ("robodyn.model.closed_chain", "ClosedChainRobot"),
    "LoopClosure": ("robodyn.model.closed_chain", "LoopClosure"),
    "load_closed_chain": ("robodyn.model.closed_chain", "load_closed_chain"),
    "close_loops": ("robodyn.dynamics.closed_chain", "close_loops"),
    "loop_jacobian": ("robodyn.dynamics.closed_chain", "loop_jacobian"),
    "loop_residual": ("robodyn.dynamics.closed_chain", "loop_residual"),
    "closed_chain_inverse_dynamics": ("robodyn.dynamics.closed_chain", "closed_chain_inverse_dynamics"),
    "closed_chain_forward_dynamics": ("robodyn.dynamics.closed_chain", "closed_chain_forward_dynamics"),
    "closed_chain_model": ("robodyn.dynamics.closed_chain", "closed_chain_model"),
    "LoopClosureError": ("robodyn.dynamics.closed_chain", "LoopClosureError"),
    # simulation with friction and control; derivatives, linearization, collision detection
    "control": ("robodyn.control", None),
    "friction_models": ("robodyn.dynamics.friction_models", None),
    "inverse_dynamics_derivatives": ("robodyn.dynamics.derivatives", "inverse_dynamics_derivatives"),
    "forward_dynamics_derivatives": ("robodyn.dynamics.derivatives", "forward_dynamics_derivatives"),
    "linearize": ("robodyn.dynamics.derivatives", "linearize"),
    "inverse_dynamics_second_derivatives": ("robodyn.dynamics.derivatives", "inverse_dynamics_second_derivatives"),
    "discretize": ("robodyn.dynamics.discrete", "discretize"),
    "step": ("robodyn.simulation.step", "step"),
    "momentum_observer": ("robodyn.dynamics.derivatives", "momentum_observer"),
    "generalized_momentum": ("robodyn.dynamics.derivatives", "generalized_momentum"),
    # floating and mobile bases (Pinocchio's free-flyer conventions)
    "floating_inverse_dynamics": ("robodyn.dynamics.floating", "floating_inverse_dynamics"),
    "floating_inertia_matrix": ("robodyn.dynamics.floating", "floating_inertia_matrix"),
    "floating_forward_dynamics": ("robodyn.dynamics.floating", "floating_forward_dynamics"),
    "center_of_mass": ("robodyn.dynamics.floating", "center_of_mass"),
    "center_of_mass_jacobian": ("robodyn.dynamics.floating", "center_of_mass_jacobian"),
    "centroidal_momentum_matrix": ("robodyn.dynamics.floating", "centroidal_momentum_matrix"),
    "floating_jacobian": ("robodyn.dynamics.floating", "floating_jacobian"),
    "wrenches_at_frames": ("robodyn.dynamics.floating", "wrenches_at_frames"),
    "contact_forward_dynamics": ("robodyn.dynamics.floating", "contact_forward_dynamics"),
    "constrained_forward_dynamics": ("robodyn.dynamics.contact", "constrained_forward_dynamics"),
    "reduced_inverse_dynamics": ("robodyn.dynamics.floating", "reduced_inverse_dynamics"),
    "floating_inverse_dynamics_derivatives": ("robodyn.dynamics.derivatives", "floating_inverse_dynamics_derivatives"),
    "floating_forward_dynamics_derivatives": ("robodyn.dynamics.derivatives", "floating_forward_dynamics_derivatives"),
    "floating_regressor": ("robodyn.parameters.floating", "floating_regressor"),
    "floating_parameter_names": ("robodyn.parameters.floating", "floating_parameter_names"),
    "floating_parameter_vector": ("robodyn.parameters.floating", "floating_parameter_vector"),
    "identify_from_base": ("robodyn.identification.floating", "identify_from_base"),
    "identify_floating": ("robodyn.identification.floating", "identify_floating"),
    "floating_base_parameters": ("robodyn.parameters.floating", "floating_base_parameters"),
    # URDF, Pinocchio and MuJoCo interop, plotting
    "from_urdf": ("robodyn.model.urdf", "from_urdf"),
    "to_urdf": ("robodyn.model.urdf", "to_urdf"),
    "mimic_coupling": ("robodyn.model.urdf", "mimic_coupling"),
    "MimicCoupling": ("robodyn.model.urdf", "MimicCoupling"),
    "to_pinocchio": ("robodyn.interop", "to_pinocchio"),
    "to_mujoco_xml": ("robodyn.interop", "to_mujoco_xml"),
    "plot": ("robodyn.plot", None),
    # seeing the robot: 3-D web viewer, animations
    "viewer": ("robodyn.viewer", None),
    "view": ("robodyn.viewer", "view"),
    "animate": ("robodyn.viewer", "animate"),
    # beyond one machine (Dask) and joint logs (ROS bags, CSV, HDF5, Parquet)
    "distributed": ("robodyn.distributed", None),
    "simulate_many": ("robodyn.distributed", "simulate_many"),
    "read_joint_log": ("robodyn.logs", "read_joint_log"),
    "standstill_poses": ("robodyn.logs", "standstill_poses"),
    "urdf_visuals": ("robodyn.model.urdf", "urdf_visuals"),
})


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'robodyn' has no attribute {name!r}")
    from importlib import import_module

    module, attr = _LAZY[name]
    value = import_module(module) if attr is None else getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


from robodyn.version import __version__  # noqa: E402

__all__ = (
    "InputError", "ModelError", "ModelFileError", "NonPhysicalInertiaError", "RobodynError", "UnknownRobotError",
    "NumericOverflowError",
    "PARAMETER_NAMES", "Robot", "com_from_standard", "standard_from_com", "with_parameters",
    "dumps", "list_robots", "load", "loads", "save",
    "forward_kinematics", "jacobian", "jacobian_dot_qd", "link_accelerations", "link_velocities",
    "bias_torques", "friction_torques", "gravity_torques",
    "forward_dynamics", "inertia_matrix", "inverse_dynamics",
    # complete dynamic model
    "christoffel_symbols", "coriolis_matrix", "inertia_matrix_derivative", "kinetic_energy", "potential_energy", "state_derivative",
    # extended models and analysis
    "ElasticRobot", "elastic_energy", "elastic_forward_dynamics", "elastic_inverse_dynamics", "elastic_motor_torques",
    "elastic_state_derivative",
    "Transmission", "actuator_torques", "end_effector_torques", "joint_from_motor", "motor_forward_dynamics",
    "motor_from_joint", "motor_inertia_matrix", "motor_inverse_dynamics",
    "analysis",
    # robots
    "from_craig_mdh", "from_standard_dh", "to_craig_mdh", "to_standard_dh",
    # studies
    "accuracy_study", "opcount_report", "inverse_kinematics", "puma_line_study", "simulate",
    # symbolic
    "symbolic", "CompiledModel", "customized_model", "parameters", "simulation", "to_casadi",
    # base parameters
    "BaseParameters", "base_parameters", "energy_functions", "lambda_matrix", "regressor",
    "standard_parameter_names", "standard_parameter_vector",
    # identification: gravity-compensation calibration (Dellin)
    "identification", "GravityCalibration", "LockedBodyInertia", "calibrate_gravity", "calibration_poses",
    "first_moments", "gravity_parameter_structure", "gravity_regressor", "identify_locked_inertia",
    "load_gravity_calibration", "locked_body_inertia", "wam_gravity_study",
    "identify_link_inertias", "LinkInertias",
    "identify_locked_body",
    # dynamic identification
    "ExcitationTrajectory", "excitation_trajectory", "IdentificationData", "prepare_identification_data",
    "Identification", "IdentificationError", "identify", "pseudo_inertia",
    "physical_fit", "PhysicalFit",
    "EssentialParameters", "essential_parameters", "Payload", "identify_payload", "DriveGains", "identify_drive_gains",
    "joint_torques_from_motor", "transmission_torques", "load_transmission",
    # trajectories, time scaling, optimal motion, task space, coordinates, closed chains
    "RestToRest", "Trapezoidal", "Spline", "FourierSeries", "time_scale", "time_optimal", "InfeasibleLimitsError",
    "task_space_dynamics", "SingularConfigurationError", "transform_dynamics", "optimal_motion", "OptimizationError",
    "null_space_dynamics", "jacobian_derivative",
    "transformed_factorization", "momentum_state", "momentum_state_derivative", "velocity_state", "simulate_momentum",
    "counter_masses", "spring_balance", "spring_torques", "planar_five_bar", "spatial_five_bar",
    "ClosedChainRobot", "LoopClosure", "load_closed_chain", "close_loops", "closed_chain_inverse_dynamics",
    "closed_chain_forward_dynamics", "closed_chain_model", "LoopClosureError", "loop_jacobian", "loop_residual",
    # simulation with friction and control; derivatives
    "control", "friction_models", "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearize",
    "discretize", "step", "inverse_dynamics_second_derivatives", "constrained_forward_dynamics",
    "momentum_observer", "generalized_momentum",
    # floating and mobile bases
    "floating_inverse_dynamics", "floating_inertia_matrix", "floating_forward_dynamics", "center_of_mass",
    "center_of_mass_jacobian", "centroidal_momentum_matrix", "floating_jacobian", "wrenches_at_frames",
    "contact_forward_dynamics", "floating_regressor", "floating_parameter_names", "floating_parameter_vector",
    "identify_from_base", "identify_floating", "floating_base_parameters", "reduced_inverse_dynamics",
    "floating_inverse_dynamics_derivatives", "floating_forward_dynamics_derivatives",
    # URDF and interop, plotting
    "from_urdf", "to_urdf", "MimicCoupling", "mimic_coupling", "to_mujoco_xml", "to_pinocchio", "plot",
    # viewer
    "viewer", "view", "animate",
    # beyond one machine, joint logs
    "distributed", "simulate_many", "read_joint_log", "standstill_poses", "urdf_visuals",
)
