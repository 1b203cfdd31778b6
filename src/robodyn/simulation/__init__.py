"""Simulation: inverse kinematics, joint and task-space trajectories, open- and closed-loop integration with
friction models and controllers (:func:`simulate`, one fixed :func:`step`, :func:`simulate_momentum`), time scaling
and optimal motion, steps with frictional contacts, and the PUMA straight-line study of Mata et al. (2002) §5.2
(docs/simulation-control.md, docs/task-space-and-motion.md).
"""

from robodyn.simulation.integrate import Simulation, simulate
from robodyn.simulation.inverse_kinematics import inverse_kinematics, pose_error, tool_pose
from robodyn.simulation.step import step
from robodyn.simulation.puma_line import PumaLineResult, Reference, line_reference, puma_line_study
from robodyn.simulation.trajectories import (FourierSeries, RestToRest, Spline, Trapezoidal, quintic, straight_line,
                                             zyz_matrix)
from robodyn.simulation.time_scaling import InfeasibleLimitsError, time_optimal, time_scale
from robodyn.simulation.optimal import OptimizationError, optimal_motion
from robodyn.simulation.momentum import simulate_momentum
from robodyn.simulation.contact import (ContactDerivatives, ContactSolverError, ContactStep, contact_step,
                                        contact_step_derivatives)

__all__ = (
    "Simulation", "simulate", "inverse_kinematics", "pose_error", "tool_pose", "step",
    "PumaLineResult", "Reference", "line_reference", "puma_line_study", "quintic", "straight_line", "zyz_matrix",
    "RestToRest", "Trapezoidal", "Spline", "FourierSeries", "time_scale", "time_optimal", "InfeasibleLimitsError",
    "optimal_motion", "OptimizationError", "simulate_momentum", "contact_step", "ContactStep", "ContactSolverError",
    "contact_step_derivatives", "ContactDerivatives",
)
