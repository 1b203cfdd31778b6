"""``rd.compile(robot, kind, backend="jax")``: a customized model as a pure JAX function.

The model is the customized model of Khalil & Dombre §9.6 that the C and CUDA back ends compile (products by 0
and ±1 folded, constants evaluated off-line), written on ``jax.numpy`` as one straight-line function
(:func:`robodyn.symbolic.codegen.numpy_code.source` with ``module="jax.numpy"``). ``jax.jit`` compiles it into fused
kernels on a GPU, with 15–20 % fewer operations than :mod:`robodyn.jax` (which traces the general recursions),
and ``jax.vmap``, ``jax.grad`` and ``jax.jacfwd`` trace it like any JAX function.

As on the CUDA back end, the inertial parameters and friction coefficients are an input (``params``, default the
robot file's values), so one traced function serves nominal and identified parameters. Inputs are not checked
beyond their shapes (the function is meant to be traced), and forward dynamics at a state where the inertia
matrix is singular gives inf or NaN rather than an error.
"""

from __future__ import annotations

import numpy as np

from robodyn.errors import RobodynError
from robodyn.spatial import jax_matrix, jax_vector
from robodyn.symbolic.codegen import numpy_code
from robodyn.symbolic.cuda import call_arguments, kernel_model
from robodyn.symbolic.derivative_model import DERIVATIVE_KINDS
from robodyn.symbolic.models import canonical_kind

#: kinds of the JAX back end (those of the CUDA kernels, and the derivatives)
KINDS = ("inverse_dynamics", "bias_torques", "gravity_torques", "inertia_matrix", "forward_dynamics", "regressor",
         "inverse_dynamics_derivatives", "forward_dynamics_derivatives")


class JaxUnavailableError(RobodynError):
    """JAX is missing: install ``robodyn[jax]``."""


class JaxModel:
    """Callable customized model on JAX arrays: ``f(q, ..., gravity=None, params=None)`` like the numeric function
    without its ``robot`` argument, traceable by ``jax.jit``, ``jax.vmap`` and ``jax.grad``.

    Computes in the dtype of the joint arguments (float64 needs ``jax.config.update("jax_enable_x64", True)``).

    Attributes
    ----------
    model : CustomizedModel
        The generated model (gravity and parameters as inputs, except the regressor's parameters).
    source : str
        The Python source of the JAX function.
    parameter_names : list of str, nominal_parameters : ndarray
        Names and robot-file values of the ``params`` argument.
    """

    def __init__(self, robot, kind: str, parameters: str = "standard"):
        try:
            import jax.numpy as jnp
        except ImportError:
            raise JaxUnavailableError("backend='jax' needs JAX: pip install 'robodyn[jax]'") from None
        self._jnp = jnp
        self.robot, self.kind, self.parameters = robot, canonical_kind(kind, KINDS), parameters
        self.model, self.parameter_names, self.nominal_parameters = kernel_model(robot, self.kind, parameters)
        self.joint_names = tuple(a.name for a in self.model.arguments if a.name not in ("gravity", "params"))
        self.source = numpy_code.source(self.model, "rd_model", module="jax.numpy")
        self._function = numpy_code.function(self.model, module="jax.numpy")

    def __call__(self, *args, gravity=None, params=None):
        jnp = self._jnp
        joint, extra = call_arguments(self, "JAX", args, gravity, params, jnp.asarray)
        dtype = jnp.result_type(*joint)
        arrays = joint + [jnp.asarray(a, dtype=dtype) for _, a, _ in extra]
        values = self._function(*arrays)
        like = jnp.zeros(np.broadcast_shapes(*(a.shape[:-1] for a in arrays)) + (1,), dtype)  # the result's batch and dtype
        if len(self.model.output_shape) == 1:
            # forward dynamics: XLA's GPU code for the one multi-output fusion that the barrier makes is slower than
            # its code for the plain stack (H100, 7-joint Panda, float64: 1.5e8 against 3.9e8 states/s)
            return jax_vector(values, like, barrier=self.kind != "forward_dynamics")
        rows, columns = self.model.output_shape
        out = jax_matrix([values[r * columns:(r + 1) * columns] for r in range(rows)], like)
        if self.kind not in DERIVATIVE_KINDS:
            return out
        # the derivative model's rows: one (n, n) block per differentiated argument, the numeric function's record
        from robodyn.dynamics import derivatives

        record = {"inverse_dynamics_derivatives": derivatives.InverseDynamicsDerivatives,
                  "forward_dynamics_derivatives": derivatives.ForwardDynamicsDerivatives}[self.kind]
        n = columns
        return record(*(out[..., k * n:(k + 1) * n, :] for k in range(rows // n)))

    def __repr__(self) -> str:
        return f"JaxModel({self.robot.name!r}, {self.kind!r}, parameters={self.parameters!r})"
