"""``rd.compile(robot, kind, backend="jax")``: a customized model as a pure JAX function (docs/scaling.md, "JAX").

The customized model of Khalil & Dombre §9.6 that the C and CUDA back ends compile, written on ``jax.numpy``
(:func:`robodyn.symbolic.codegen.numpy_code.source` with ``module="jax.numpy"``), the inertial parameters and
friction coefficients an input ``params``. The dynamics kinds with standard parameters take their derivatives
(``jax.custom_jvp``) from the loop-free recursions of :mod:`robodyn.dynamics.loop_free`; the other kinds are
differentiated through the program. Inputs are checked for their shapes only (the function is meant to be
traced): forward dynamics at a singular inertia matrix gives inf or NaN.
"""

from __future__ import annotations

import re

import numpy as np

from robodyn.errors import RobodynError
from robodyn.model.robot import PARAMETER_NAMES
from robodyn.spatial import jax_matrix, jax_vector
from robodyn.symbolic.codegen import numpy_code
from robodyn.symbolic.cuda import call_arguments, kernel_model
from robodyn.symbolic.derivative_model import DERIVATIVE_KINDS, derivative_record
from robodyn.symbolic.kinematics_model import check_frame_point
from robodyn.symbolic.models import JOINT_ARGUMENTS, canonical_kind

#: kinds of the JAX back end (those of the CUDA kernels: the dynamics, the derivatives and a frame's kinematics)
KINDS = tuple(JOINT_ARGUMENTS)


#: kinds whose derivatives come from the loop-free recursions (JaxModel._jvp; standard parameters)
_DIFFERENTIATED = ("inverse_dynamics", "bias_torques", "gravity_torques", "inertia_matrix", "forward_dynamics")
#: a standard parameter's name: the quantity and its frame (robodyn.symbolic.customize)
_NAME = re.compile(r"^(XX|XY|XZ|YY|YZ|ZZ|MX|MY|MZ|M|IA|FS|FV|FO|FST|KST|BST)(\d+)$")
#: the friction names in the row order of robodyn.dynamics.loop_free's ``friction``
_FRICTION = ("FS", "FV", "FO", "FST", "KST", "BST")


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

    def __init__(self, robot, kind: str, parameters: str = "standard", frame=None, point=None):
        try:
            import jax.numpy as jnp
        except ImportError:
            raise JaxUnavailableError("backend='jax' needs JAX: pip install 'robodyn[jax]'") from None
        self._jnp = jnp
        self.robot, self.kind, self.parameters = robot, canonical_kind(kind, KINDS), parameters
        check_frame_point(self.kind, frame, point)
        self.model, self.parameter_names, self.nominal_parameters = kernel_model(robot, self.kind, parameters,
                                                                                 frame, point)
        self.joint_names = tuple(a.name for a in self.model.arguments if a.name not in ("gravity", "params"))
        self.source = numpy_code.source(self.model, "rd_model", module="jax.numpy")
        self._function = numpy_code.function(self.model, module="jax.numpy")
        self._traced = self._evaluate
        if (self.kind in _DIFFERENTIATED and parameters == "standard"
                and all(_NAME.match(k) for k in self.parameter_names)):
            import jax

            self._traced = jax.custom_jvp(self._evaluate)
            self._traced.defjvp(self._jvp, symbolic_zeros=True)
            self._table_map = self._parameter_places()

    def __call__(self, *args, gravity=None, params=None):
        jnp = self._jnp
        joint, extra = call_arguments(self, "JAX", args, gravity, params, jnp.asarray)
        dtype = jnp.result_type(*joint)
        return self._traced(*joint, *(jnp.asarray(a, dtype=dtype) for _, a, _ in extra))

    def _evaluate(self, *arrays):
        """The model's program on the arrays of its arguments (joint arguments, gravity, params), assembled."""
        jnp = self._jnp
        values = self._function(*arrays)
        # the result's batch and dtype
        like = jnp.zeros(np.broadcast_shapes(*(a.shape[:-1] for a in arrays)) + (1,), arrays[0].dtype)
        if len(self.model.output_shape) == 1:
            # forward dynamics: XLA's GPU code for the one multi-output fusion that the barrier makes is slower than
            # its code for the plain stack (H100, 7-joint Panda, float64: 1.5e8 against 3.9e8 states/s)
            return jax_vector(values, like, barrier=self.kind != "forward_dynamics")
        rows, columns = self.model.output_shape
        out = jax_matrix([values[r * columns:(r + 1) * columns] for r in range(rows)], like)
        return derivative_record(self.kind, out, columns) if self.kind in DERIVATIVE_KINDS else out

    def _jvp(self, primals, tangents):
        """(f, its tangent): the value from this model, the tangent from the loop-free recursions of
        :mod:`robodyn.dynamics.loop_free` at the same parameters; forward dynamics (q̈ and its tangent) by their
        implicit function (:func:`robodyn.dynamics.loop_free.implicit_forward_dynamics`), so that a second
        derivative differentiates the loop-free program only, never this model's."""
        from robodyn.dynamics import loop_free

        if self.kind != "forward_dynamics":
            return self._traced(*primals), loop_free.live_jvp(self._loop_free, primals, tangents)
        q, qd, tau, g, p = primals
        dq, dqd, dtau, dg, dp = tangents
        return loop_free.implicit_forward_dynamics(self._loop_free_torques,
                                                   lambda a, b, c, d: self._loop_free_inertia(a, d),
                                                   (q, qd, g, p), (dq, dqd, dg, dp), tau, dtau)

    def _parameter_places(self):
        """Where this model's parameters go in the tables of :mod:`robodyn.dynamics.loop_free` (constant: made
        once, not at every trace): the selection S (P, cells), the robot file's values of the other cells, and the
        table's shape (nf, 11); XX..M, IA of frame j, FS FV FO FST KST BST of joint j."""
        from robodyn.dynamics import loop_free

        robot = self.robot
        table, friction = loop_free.robot_table(robot), loop_free.robot_friction(robot)
        S = np.zeros((len(self.parameter_names), table.size + friction.size))
        columns = PARAMETER_NAMES + ("IA",)
        for k, name in enumerate(self.parameter_names):
            head, frame = _NAME.match(name).groups()
            j = int(frame) - 1
            if head in columns:
                place = j * table.shape[1] + columns.index(head)
            else:
                place = table.size + _FRICTION.index(head) * robot.n + list(robot.joint_frames).index(j)
            S[k, place] = 1.0
        fixed = np.concatenate([table.ravel(), friction.ravel()]) * (S.sum(0) == 0)
        return S, fixed, table.shape, friction.shape

    def _tables(self, params):
        """(table (nf, 11), friction (6, n)) of :mod:`robodyn.dynamics.loop_free`: the robot file's values with this
        model's parameters ``params`` (P,) in their places."""
        jnp = self._jnp
        S, fixed, table, friction = self._table_map
        flat = jnp.asarray(fixed, params.dtype) + params @ jnp.asarray(S, params.dtype)
        size = int(np.prod(table))
        return flat[:size].reshape(table), flat[size:].reshape(friction)

    def _loop_free_torques(self, q, qd, g, params, qdd):
        from robodyn.dynamics import loop_free

        def one(q, qd, g, params, qdd):
            return loop_free.inverse_dynamics(self.robot, q, qd, qdd, g, *self._tables(params))

        return self._jnp.vectorize(one, signature="(n),(n),(k),(p),(n)->(n)")(q, qd, g, params, qdd)

    def _loop_free_inertia(self, q, params):
        from robodyn.dynamics import loop_free

        def one(q, params):
            return loop_free.inertia_matrix(self.robot, q, self._tables(params)[0])

        return self._jnp.vectorize(one, signature="(n),(p)->(n,n)")(q, params)

    def _loop_free(self, *arrays):
        """This model's function of its arguments by the loop-free recursions (the same numbers to rounding)."""
        from robodyn.dynamics import loop_free

        jnp = self._jnp
        if self.kind == "inertia_matrix":
            return self._loop_free_inertia(*arrays)
        if self.kind == "gravity_torques":
            def one(q, g, params):
                return loop_free.gravity_torques(self.robot, q, g, self._tables(params)[0])

            return jnp.vectorize(one, signature="(n),(k),(p)->(n)")(*arrays)
        if self.kind == "bias_torques":
            q, qd, g, p = arrays
            return self._loop_free_torques(q, qd, g, p, jnp.zeros_like(qd))
        q, qd, qdd, g, p = arrays
        return self._loop_free_torques(q, qd, g, p, qdd)

    def __repr__(self) -> str:
        return f"JaxModel({self.robot.name!r}, {self.kind!r}, parameters={self.parameters!r})"
