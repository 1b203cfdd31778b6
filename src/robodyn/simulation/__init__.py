"""Simulation: numerical inverse kinematics, task-space trajectories, open- and closed-loop forward-dynamics
integration (continuous or with a sampled controller) with friction models for simulation
(:mod:`robodyn.dynamics.friction_models`) and controllers (:mod:`robodyn.control`), one fixed integration step
(:func:`step`), and the PUMA straight-line study of Mata et al. (2002) §5.2.

The namespace ``rd.simulation`` also holds the joint trajectories (:class:`RestToRest`, :class:`Trapezoidal`,
:class:`Spline`, :class:`FourierSeries`), time scaling under torque limits (:func:`time_scale`,
:func:`time_optimal`), optimal motion (:func:`optimal_motion`) and the momentum-form simulation
(:func:`simulate_momentum`), and one time step with unilateral frictional contacts (:func:`contact_step`) and its
derivatives (:func:`contact_step_derivatives`).
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
