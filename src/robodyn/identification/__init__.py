"""Identification of robot models from measurements."""

# --- dynamic identification (issue 9, section 2): excitation, data preparation, least squares ---
from robodyn.identification.excitation import ExcitationTrajectory, excitation_trajectory
from robodyn.identification.data import IdentificationData, prepare_identification_data
from robodyn.identification.dynamic import Identification, IdentificationError, identify, pseudo_inertia

