"""Simulation: numerical inverse kinematics, task-space trajectories, open- and closed-loop forward-dynamics
integration (continuous or with a sampled controller) with friction models for simulation
(:mod:`robodyn.dynamics.friction_models`) and controllers (:mod:`robodyn.control`), one fixed integration step
(:func:`step`), and the PUMA straight-line study of Mata et al. (2002) §5.2."""

from robodyn.simulation.integrate import Simulation, simulate
from robodyn.simulation.inverse_kinematics import inverse_kinematics, pose_error, tool_pose
from robodyn.simulation.step import step
from robodyn.simulation.puma_line import PumaLineResult, Reference, line_reference, puma_line_study
from robodyn.simulation.trajectories import quintic, straight_line, zyz_matrix

__all__ = (
    "Simulation", "simulate", "inverse_kinematics", "pose_error", "tool_pose",
    "step", "PumaLineResult", "Reference", "line_reference", "puma_line_study", "quintic", "straight_line",
    "zyz_matrix",
)
