"""Linear-in-parameters dynamic model: regressor, energy functions, base inertial parameters (Khalil & Dombre §9.4).

- :func:`regressor`, :func:`standard_parameter_vector`, :func:`standard_parameter_names` — Γ = D K [9.36];
- :func:`energy_functions`, :func:`energy_recursion`, :func:`lambda_matrix`, :func:`frame_lambda` — [9.41]–[9.47];
- :func:`base_parameters` — base parameters by the closed-form rules (§9.4.2) or by QR (§9.4.1).
"""

from robodyn.parameters.regressor import (
    link_wrench_matrix,
    regressor,
    standard_parameter_names,
    standard_parameter_vector,
)
from robodyn.parameters.energy import energy_functions, energy_recursion, eta, frame_lambda, lambda_matrix
from robodyn.parameters.base import BaseParameters, base_parameters, count_formula

__all__ = (
    "link_wrench_matrix", "regressor", "standard_parameter_names", "standard_parameter_vector",
    "energy_functions", "energy_recursion", "eta", "frame_lambda", "lambda_matrix",
    "BaseParameters", "base_parameters", "count_formula",
)
