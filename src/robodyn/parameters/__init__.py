"""Linear-in-parameters dynamic model: regressor, energy functions, base inertial parameters (Khalil & Dombre §9.4)."""
