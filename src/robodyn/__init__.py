"""robodyn — dynamics of robot manipulators in Khalil–Kleinfinger notation.

Quick use::

    import robodyn as rd
    robot = rd.load("rx90")
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
"""

from robodyn.errors import (
    InputError,
    ModelError,
    ModelFileError,
    NonPhysicalInertiaError,
    RobodynError,
    UnknownRobotError,
)
from robodyn.model import PARAMETER_NAMES, Robot, com_from_standard, standard_from_com
from robodyn.model.io import dumps, list_robots, load, loads, save
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
    coriolis_matrix,
    inertia_matrix_derivative,
    kinetic_energy,
    potential_energy,
    state_derivative,
)

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
    motor_forward_dynamics,
    motor_from_joint,
    motor_inertia_matrix,
    motor_inverse_dynamics,
)
from robodyn import analysis

# --- robots: DH table converters (Craig modified DH, standard DH) ---
from robodyn.model.dh import from_craig_mdh, from_standard_dh, to_craig_mdh, to_standard_dh
# --- heavier parts (sympy, scipy.integrate) are imported on first use, so `import robodyn` and the CLI stay quick ---
_LAZY = {
    # symbolic: customized models and code generation (issue 6)
    "symbolic": ("robodyn.symbolic", None),
    "CompiledModel": ("robodyn.symbolic", "CompiledModel"),
    "compile": ("robodyn.symbolic", "compile"),
    "customized_model": ("robodyn.symbolic", "customized_model"),
    # base parameters (issue 5): regressor, energy functions, base inertial parameters
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
    # URDF, Pinocchio and MuJoCo interop, plotting (issue 14)
    "from_urdf": ("robodyn.model.urdf", "from_urdf"),
    "to_urdf": ("robodyn.model.urdf", "to_urdf"),
    "mimic_coupling": ("robodyn.model.urdf", "mimic_coupling"),
    "MimicCoupling": ("robodyn.model.urdf", "MimicCoupling"),
    "to_pinocchio": ("robodyn.interop", "to_pinocchio"),
    "to_mujoco_xml": ("robodyn.interop", "to_mujoco_xml"),
    "plot": ("robodyn.plot", None),
}


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


__version__ = "0.1.0"

__all__ = [
    "InputError", "ModelError", "ModelFileError", "NonPhysicalInertiaError", "RobodynError", "UnknownRobotError",
    "PARAMETER_NAMES", "Robot", "com_from_standard", "standard_from_com",
    "dumps", "list_robots", "load", "loads", "save",
    "forward_kinematics", "jacobian", "jacobian_dot_qd", "link_accelerations", "link_velocities",
    "bias_torques", "friction_torques", "gravity_torques",
    "forward_dynamics", "inertia_matrix", "inverse_dynamics",
    # complete dynamic model
    "coriolis_matrix", "inertia_matrix_derivative", "kinetic_energy", "potential_energy", "state_derivative",
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
    # symbolic (issue 6)
    "symbolic", "CompiledModel", "compile", "customized_model", "parameters", "simulation",
    # base parameters (issue 5)
    "BaseParameters", "base_parameters", "energy_functions", "lambda_matrix", "regressor",
    "standard_parameter_names", "standard_parameter_vector",
    # URDF and interop, plotting (issue 14)
    "from_urdf", "to_urdf", "MimicCoupling", "mimic_coupling", "to_mujoco_xml", "to_pinocchio", "plot",
]
