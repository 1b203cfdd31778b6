"""Identification: estimating a robot's parameters from measurements.

Gravity-compensation calibration (Dellin): cumulative first moments from static poses, and second moments from
single-joint motions.  Dynamic identification: excitation trajectories (Swevers), preparation of measured data,
least-squares estimates of the base parameters and friction (Khalil & Dombre §9.4; Gautier).
"""

# --- gravity-compensation calibration (Dellin) ---
from robodyn.identification.gravity import (
    GravityCalibration,
    calibrate_gravity,
    calibration_poses,
    first_moments,
    gravity_parameter_structure,
    gravity_regressor,
    load_gravity_calibration,
)
from robodyn.identification.second_moments import (
    LinkInertias,
    LockedBodyInertia,
    identify_link_inertias,
    identify_locked_inertia,
    identify_locked_body,
    locked_body_inertia,
)
from robodyn.identification.wam import wam_gravity_study
# --- end gravity-compensation calibration ---

# dynamic identification: excitation, data preparation, least squares
from robodyn.identification.excitation import ExcitationTrajectory, excitation_trajectory
from robodyn.identification.data import IdentificationData, prepare_identification_data
from robodyn.identification.consistent import pseudo_inertia
from robodyn.identification.dynamic import IdentificationOptions, identify
from robodyn.identification.essential import EssentialParameters, essential_parameters
from robodyn.identification.factors import IdentificationError
from robodyn.identification.physical import PhysicalFit, physical_fit
from robodyn.identification.results import Identification, Validation
from robodyn.identification.payload import DriveGains, Payload, identify_drive_gains, identify_payload
from robodyn.identification.conventions import GravityDirection, gravity_direction
# --- end dynamic identification ---

__all__ = (
    "GravityCalibration", "calibrate_gravity", "calibration_poses", "first_moments", "gravity_parameter_structure",
    "gravity_regressor", "load_gravity_calibration", "LinkInertias", "LockedBodyInertia", "identify_link_inertias",
    "identify_locked_inertia", "identify_locked_body", "locked_body_inertia", "wam_gravity_study",
    "ExcitationTrajectory", "excitation_trajectory", "IdentificationData", "prepare_identification_data",
    "pseudo_inertia", "IdentificationOptions", "identify", "EssentialParameters", "essential_parameters",
    "IdentificationError", "PhysicalFit", "physical_fit", "Identification", "Validation", "DriveGains", "Payload",
    "identify_drive_gains", "identify_payload", "GravityDirection", "gravity_direction",
)
