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

# --- robots: DH table converters (Craig modified DH, standard DH) ---
from robodyn.model.dh import from_craig_mdh, from_standard_dh, to_craig_mdh, to_standard_dh
# ---- symbolic: customized models and code generation (issue 6) ----
from robodyn import symbolic
from robodyn.symbolic import CompiledModel, compile, customized_model
# --- base parameters (issue 5): regressor, energy functions, base inertial parameters ---
from robodyn.parameters import (
    BaseParameters,
    base_parameters,
    energy_functions,
    lambda_matrix,
    regressor,
    standard_parameter_names,
    standard_parameter_vector,
)

__version__ = "0.1.0"

__all__ = [
    "InputError", "ModelError", "ModelFileError", "NonPhysicalInertiaError", "RobodynError", "UnknownRobotError",
    "PARAMETER_NAMES", "Robot", "com_from_standard", "standard_from_com",
    "dumps", "list_robots", "load", "loads", "save",
    "forward_kinematics", "jacobian", "jacobian_dot_qd", "link_accelerations", "link_velocities",
    "bias_torques", "friction_torques", "gravity_torques",
    "forward_dynamics", "inertia_matrix", "inverse_dynamics",
    # robots
    "from_craig_mdh", "from_standard_dh", "to_craig_mdh", "to_standard_dh",
    # symbolic (issue 6)
    "symbolic", "CompiledModel", "compile", "customized_model",
    # base parameters (issue 5)
    "BaseParameters", "base_parameters", "energy_functions", "lambda_matrix", "regressor",
    "standard_parameter_names", "standard_parameter_vector",
]
