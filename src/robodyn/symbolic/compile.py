"""``rd.compile``: a customized model compiled to machine code, called like the numeric functions.

    idm = rd.compile(robot, "inverse_dynamics", parameters="base")
    tau = idm(q, qd, qdd)                 # same signature and checks as rd.inverse_dynamics

The model is generated once (gravity as an argument, external wrenches only in a second variant built
the first time ``wrenches`` is given), emitted as C99, compiled into the cache and called through cffi
on contiguous (N, n) blocks: the loop over samples runs in C. Where Python's and NumPy's headers are
installed, the call itself is C (the library's ``rdmodel.Entry``): one state of 1-D float64 arrays is
checked and evaluated there without any Python code, and every other call goes on to the general path.
"""

from __future__ import annotations

import math
from types import MappingProxyType
import inspect
import time

import numpy as np

from robodyn.arrays import check_out, finite_array, working_dtype
from robodyn.progress import progress
from robodyn.threads import thread_count
from robodyn.errors import InputError, ModelError
from robodyn.native.build import CompileTimeoutError
from robodyn.symbolic.codegen import c_code, numpy_code
from robodyn.symbolic.codegen.printer import NonFiniteExpressionError
from robodyn.symbolic.derivative_model import (DERIVATIVE_KINDS, derivative_model, derivative_record,
                                               parameters_input_model)
from robodyn.symbolic.floating import FloatingCompiledModel
from robodyn.symbolic.kinematics_model import KINEMATICS_KINDS, check_frame_point, kinematics_model
from robodyn.symbolic.models import JOINT_ARGUMENTS, canonical_kind, customized_model, overflow_error, pivot_error

#: kind -> (joint arguments, takes wrenches, takes gravity): the numeric function's arguments after robot
_SIGNATURES = MappingProxyType({
    kind: (joint, kind in ("inverse_dynamics", "bias_torques", "forward_dynamics", *DERIVATIVE_KINDS),
           kind not in ("inertia_matrix", *KINEMATICS_KINDS)) for kind, joint in JOINT_ARGUMENTS.items()})


def _point(point) -> tuple:
    """A point fixed to a link (3,) (m), finite, as a tuple of floats (constants of a kinematics model)."""
    p = finite_array("point", point)
    if p.shape != (3,):
        raise InputError(f"argument 'point' has shape {p.shape}; give 3 coordinates (m) in the frame")
    return tuple(float(c) for c in p)


def _as_real(name, value):
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        raise InputError(f"argument '{name}' has dtype {a.dtype}; give real numbers")
    return a


class CompiledModel:
    """Callable compiled model; ``model`` is the underlying :class:`CustomizedModel` (no wrenches).

    With the CPython entry (C backend, Python's and NumPy's headers found), each instance gets its own subclass
    whose ``__call__`` is the instance's ``rdmodel.Entry``: an object that is not a descriptor, so ``f(q, qd,
    qdd)`` goes straight to C. The entry evaluates one state there and hands every other call, unchanged, to
    the general path :meth:`_general` of this instance (several instances may share one loaded library).
    """

    def __init__(self, robot, kind: str, parameters: str = "standard", backend: str = "c",
                 timeout: float | None = None, parameters_input: bool = False, threads: int | None = None,
                 frame=None, point=None):
        kind = canonical_kind(kind, tuple(_SIGNATURES))
        check_frame_point(kind, frame, point)
        if kind in KINEMATICS_KINDS and parameters_input:
            raise InputError(f"parameters_input=True: {kind} does not depend on the inertial parameters")
        #: the frame and point of a kinematics kind (constants of its model)
        self.frame, self.point = frame, None if point is None else _point(point)
        if backend not in ("c", "numpy"):
            raise InputError(f"backend = {backend!r}; choose 'c', 'numpy', 'cuda' or 'jax'")
        if timeout is not None and not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                                        and timeout > 0 and np.isfinite(timeout)):
            raise InputError(f"timeout = {timeout!r}; give a positive number of seconds or None (no limit)")
        self._timeout = timeout
        #: threads for batched calls (None: every core); the C code runs without the GIL
        self.threads = thread_count(threads)
        if parameters_input and kind == "regressor":
            raise InputError("parameters_input=True: the regressor does not depend on the inertial parameters; "
                             "use it with the other kinds")
        self.parameters_input = bool(parameters_input)
        #: names of the ``params`` argument (parameters_input=True) and their values in the robot file
        self.parameter_names: list = []
        self.nominal_parameters = np.zeros(0)
        self.robot, self.kind, self.parameters, self.backend = robot, kind, parameters, backend
        self._joint, self._takes_wrenches, self._takes_gravity = _SIGNATURES[kind]
        self._variants = {}
        self._entry = None
        self.model, _, module = self._variant(False)
        self.__doc__ = f"Compiled {kind} of robot {robot.name} ({parameters} parameters, {backend})."
        P = inspect.Parameter
        self.__signature__ = inspect.Signature(
            [P(k, P.POSITIONAL_OR_KEYWORD) for k in self._joint]
            + [P(k, P.POSITIONAL_OR_KEYWORD, default=None) for k, on in (("wrenches", self._takes_wrenches),
                                                                         ("gravity", self._takes_gravity),
                                                                         ("params", self.parameters_input)) if on]
            + [P("out", P.KEYWORD_ONLY, default=None)])
        if module is not None:
            self._install_entry(module)

    def _install_entry(self, module):
        """Make ``module``'s ``Entry`` this instance's call (see the class docstring).

        The entry takes the joint arguments positionally and the kind's keywords; a keyword absent or None
        reads the value the general path would use (the robot's gravity, the nominal parameters; no
        wrenches: the variant without them)."""
        fallbacks = {}
        if self._takes_gravity:
            fallbacks["gravity"] = np.array(self.robot.gravity, dtype=np.float64)
        if self._takes_wrenches:
            fallbacks["wrenches"] = None
        if self.parameters_input:
            fallbacks["params"] = self.nominal_parameters
        entry = module.Entry(self._array if self.kind in DERIVATIVE_KINDS else self._general, len(self._joint),
                             fallbacks)
        entry.set_variant(0, module.variant)
        self._entry = entry
        if self.kind in DERIVATIVE_KINDS:  # the entry gives the stacked array: __call__ splits it into the record
            return
        base = type(self)
        self.__class__ = type(base.__name__, (base,), {"__call__": entry, "__module__": base.__module__,
                                                       "__qualname__": base.__qualname__, "__doc__": base.__doc__})

    def _variant(self, wrenches: bool):
        if wrenches not in self._variants:
            start = time.monotonic()
            with progress(f"generating the {self.kind} model", total=None):
                try:
                    options = dict(gravity="input" if self._takes_gravity else "constant",
                                   wrenches="all" if wrenches else "none")
                    if self.parameters_input:
                        m, self.parameter_names, self.nominal_parameters, _ = parameters_input_model(
                            self.robot, self.kind, parameters=self.parameters, **options)
                    else:
                        m = self._model(**options)
                except ModelError as exc:  # a pivot that is a constant of the robot, and zero
                    detail = str(exc).removeprefix(f"robot '{self.robot.name}': ")
                    raise ModelError(f"robot '{self.robot.name}': cannot compile {self.kind}: the model is singular "
                                     f"for every q: {detail}") from None
            left = None if self._timeout is None else self._timeout - (time.monotonic() - start)
            if left is not None and left <= 0:
                raise CompileTimeoutError(f"generating the {self.kind} model took more than timeout = "
                                          f"{self._timeout:g} s; give a larger timeout or parameters='base'")
            try:
                self._variants[wrenches] = (m, *self._load(m, left))
                module = self._variants[wrenches][2]
                if self._entry is not None and module is not None:
                    self._entry.set_variant(int(wrenches), module.variant)
            except NonFiniteExpressionError as exc:
                raise ModelError(f"robot '{self.robot.name}': cannot compile {self.kind}: {exc} (the model is singular for every q: a joint moves "
                                 "no mass or inertia, so the inertia matrix is singular); give the links mass "
                                 "and inertia, or rotor inertia Ia") from None
        return self._variants[wrenches]

    def _model(self, **options):
        """The model of this kind with the constant parameters (``options``: gravity, wrenches); the regressor's
        columns are rd.regressor's (friction columns included) or base_parameters(robot)'s."""
        if self.kind in KINEMATICS_KINDS:
            return kinematics_model(self.robot, self.kind, self.frame, self.point)
        model = derivative_model if self.kind in DERIVATIVE_KINDS else customized_model
        return model(self.robot, self.kind, parameters=self.parameters,
                     friction=self.kind != "regressor" or self.parameters == "standard", **options)

    def _load(self, m, timeout=None):
        """(batched call(count, [(array, stride), ...]) -> (out, code), CPython module ``rdmodel`` or None)."""
        if self.backend == "numpy":
            f = numpy_code.function(m, checks=True)  # also raises NonFiniteExpressionError for a singular model

            def call_numpy(count, blocks, buffer=None):
                arrays = [a.reshape(-1, *arg.shape) if st == 0 else a.reshape(count, *arg.shape)
                          for (a, st), arg in zip(blocks, m.arguments)]
                for k, a in enumerate(arrays):
                    if not np.all(np.isfinite(a)):
                        return None, k + 1
                with np.errstate(all="ignore"):  # overflow is reported below, as the C back end does
                    out, singular = f(*arrays)
                if singular >= 0:
                    return None, c_code.SINGULAR + singular
                if not np.all(np.isfinite(out)):
                    return None, c_code.OVERFLOW
                out = np.broadcast_to(out, (count,) + m.output_shape)
                if buffer is not None:
                    np.copyto(buffer, out)
                return out, 0

            return call_numpy, None
        from robodyn.native.build import compile_library

        name = "rd_model"
        # the batched entry NAME_threads splits the states over threads in C (no GIL, nothing left running)
        ffi, lib, module = compile_library(c_code.source(m, name, python_entry=True, robot_name=False)
                                           + c_code.threads_source(m, name),
                                           c_code.declarations(m, name) + c_code.threads_signature(m, name) + ";\n",
                                           timeout=timeout, description=f"compiling {self.kind} ({self.parameters})")
        fn = getattr(lib, name + "_threads")
        buf = ffi.from_buffer

        def call_c(count, blocks, buffer=None):
            out = np.empty((count,) + m.output_shape) if buffer is None else buffer
            args = []
            for a, st in blocks:
                args += [buf("double[]", a), st]
            code = fn(count, min(self.threads, 4096), *args, buf("double[]", out))  # a C int; more threads gain nothing
            return out, code

        return call_c, module

    def __call__(self, *args, **kwargs):
        if self._entry is not None and self.kind in DERIVATIVE_KINDS:
            return self._split(self._entry(*args, **kwargs))
        return self._general(*args, **kwargs)

    def _split(self, out):
        """The record of a derivative kind from its stacked (..., parts·n, n) array."""
        return derivative_record(self.kind, out, self.robot.n)

    def _general(self, *args, **kwargs):
        """The general path: any batch shapes, dtypes and argument forms; every check and error message."""
        out = self._array(*args, **kwargs)
        return self._split(out) if self.kind in DERIVATIVE_KINDS else out

    def _array(self, *args, out=None, **kwargs):
        """The general path's array (a derivative kind's stacked blocks), written into ``out`` when given (the
        keyword-only last parameter of ``__signature__``, as in the numeric functions)."""
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise InputError(f"compiled {self.kind} of robot '{self.robot.name}' is called as "
                             f"f{self.__signature__}: {e}") from None
        bound.apply_defaults()
        a = bound.arguments
        return self._checked(tuple(a[k] for k in self._joint), a.get("wrenches"), a.get("gravity"), a.get("params"),
                             out)

    def _single_state(self, args, gravity=None, wrenches=None):
        """The C entry's result for the joint arguments ``args`` of one state, or None where the call takes the
        general path (no entry, a batch, another dtype or layout, NaN or inf, a wrench variant not built yet)."""
        if self._entry is None:
            return None
        return self._entry.fast(*args, **{k: v for k, v in (("gravity", gravity), ("wrenches", wrenches))
                                          if v is not None})

    def _checked(self, args, wrenches, gravity, params=None, out=None):
        names = self._joint
        arrays = {k: _as_real(k, v) for k, v in zip(names, args)}
        n = self.robot.n
        for k, a in arrays.items():
            if a.ndim == 0 or a.shape[-1] != n:
                raise InputError(f"argument '{k}' has shape {a.shape}; robot '{self.robot.name}' has n = {n} "
                                 f"joint variables, so '{k}' must have shape (..., {n})")
        if self._takes_gravity:
            arrays["gravity"] = _as_real("gravity", self.robot.gravity if gravity is None else gravity)
        if wrenches is not None:
            arrays["wrenches"] = _as_real("wrenches", wrenches)
        if self.parameters_input:
            arrays["params"] = _as_real("params", self.nominal_parameters if params is None else params)
        tails = {"gravity": (3,), "wrenches": (self.robot.nf, 6), "params": (len(self.parameter_names),)}
        shapes = []
        for k, a in arrays.items():
            tail = tails.get(k, (n,))
            if a.ndim < len(tail) or a.shape[a.ndim - len(tail):] != tail:
                raise InputError(f"argument '{k}' has shape {a.shape}; expected (..., {', '.join(map(str, tail))})")
            shapes.append(a.shape[:a.ndim - len(tail)])
        try:
            batch = np.broadcast_shapes(*shapes)
        except ValueError:
            raise InputError("batch axes do not broadcast: " + ", ".join(f"{k} {a.shape}" for k, a in arrays.items())) from None
        dtype = working_dtype(*(args + tuple(x for x in (gravity, wrenches, params) if x is not None)))
        m, call, _ = self._variant(wrenches is not None)
        count = math.prod(batch)
        if out is not None:
            check_out(f"compiled {self.kind}", out, batch + m.output_shape, dtype, arrays)
        blocks = []
        for a, shape in zip(arrays.values(), shapes):
            size = math.prod(shape)           # 1: one value for every state, stride 0
            full = a if size == 1 else np.broadcast_to(a, batch + a.shape[len(shape):])
            blocks.append((np.ascontiguousarray(full, dtype=np.float64).reshape(-1),
                           0 if size == 1 else a.size // max(size, 1)))
        direct = out is not None and out.dtype == np.float64
        result, code = call(count, blocks, out.reshape((count,) + m.output_shape) if direct else None)
        if code:
            self._raise(code, list(arrays), m)
        if direct:
            return out
        result = np.asarray(result).reshape(batch + m.output_shape)
        if out is None:
            return result.astype(dtype, copy=False)
        np.copyto(out, result, casting="same_kind")
        return out

    def _raise(self, code, names, m):
        """The error of the numeric API for a status code of the generated C (or of the NumPy back end)."""
        if 1 <= code <= len(names):
            raise InputError(f"argument '{names[code - 1]}' contains NaN or inf; give finite values")
        if c_code.SINGULAR <= code < c_code.SINGULAR + len(m.checks):
            joint = m.checks[code - c_code.SINGULAR][0]
            raise pivot_error(self.robot.name, f"compiled {self.kind}", joint)
        if code == c_code.OVERFLOW:
            raise overflow_error(self.robot.name, f"compiled {self.kind}")
        raise MemoryError(f"compiled {self.kind}: out of memory")  # rd_parallel's negative codes

    def operation_count(self) -> dict:
        """Operations per evaluation, by robodyn's one definition (docs/symbolic.md, "Operation counts"):
        those of ``customized_model(robot, kind, parameters)``, the model ``robodyn generate`` writes, with the
        robot's own gravity as constants and no external wrenches. The compiled function takes gravity as an
        argument so that it can be changed per call; that costs a few more operations than counted here."""
        if not hasattr(self, "_ops"):
            self._ops = self._model().operation_count()
        return dict(self._ops)

    def __repr__(self) -> str:
        return f"CompiledModel({self.robot.name!r}, {self.kind!r}, parameters={self.parameters!r}, backend={self.backend!r})"


def compile(robot, kind: str = "inverse_dynamics", parameters: str = "standard", backend: str = "c",  # noqa: A001
            timeout: float | None = None, parameters_input: bool = False, threads: int | None = None,
            dtype: str = "float64", frame=None, point=None):
    """Compile the customized model ``kind`` of ``robot`` (Khalil & Dombre §9.6) into a callable.

    Parameters
    ----------
    robot : Robot
    kind : "inverse_dynamics" | "bias_torques" | "gravity_torques" | "inertia_matrix" | "forward_dynamics" |
        "regressor" | "inverse_dynamics_derivatives" | "forward_dynamics_derivatives" | "jacobian" |
        "jacobian_dot_qd": the name of the numeric function the model equals, or an alias (idm, ccg, gra, inm,
        ddm, dim; "bias", "gravity": ``robodyn.symbolic.models.ALIASES``).
    parameters : "standard" | "base"
        Inertial parameters the generated model uses (results are the same up to rounding).
    backend : "c" (compiled with the machine's C compiler, cached) | "numpy" (generated NumPy code) | "cuda"
        (a CUDA kernel compiled by NVRTC through CuPy, one thread per state: see :class:`robodyn.symbolic.cuda.
        CudaModel`; needs ``robodyn[cuda]`` and an NVIDIA GPU; parameters are always a kernel input there) |
        "jax" (a pure JAX function, traceable by ``jax.jit``/``vmap``/``grad``, parameters an input: see
        :class:`robodyn.symbolic.jax_model.JaxModel`; fixed-base robots; needs ``robodyn[jax]``)
    timeout : float or None
        Seconds allowed for generating and compiling (None: no limit). The C compiler is killed when it is
        reached; symbolic generation is checked when it ends. A spinner shows on a terminal past one second.
    parameters_input : bool
        Add an argument ``params`` (..., P) (default: the robot file's values): the nonzero inertial parameters
        and friction coefficients named by ``.parameter_names`` (values ``.nominal_parameters``), so one
        compiled function serves identified parameters. Parameters that are zero in the robot file stay zero.
        For the dynamics and their derivative kinds, not for the regressor or the kinematics kinds.
    threads : int or None
        Threads over which batched calls split their states (None: every core). The compiled C code runs
        without Python's GIL; states are cut in consecutive chunks, so any thread count gives the same numbers.
    dtype : "float64" | "float32"
        Precision of the CUDA kernel (backend="cuda" only; the C code always computes in float64).
    frame, point : the frame (number 1..nf or name; default the end frame) and a point fixed to it (3,) (m, in
        its frame; default O_j) of the kinds ``jacobian`` and ``jacobian_dot_qd`` (constants of their model).

    Returns
    -------
    CompiledModel
        Called like the numeric function without its ``robot`` argument (``inspect.signature`` shows it):

        ===================  ==========================================  =================================
        kind                 call                                        equals
        ===================  ==========================================  =================================
        inverse_dynamics     f(q, qd, qdd, wrenches=None, gravity=None)  rd.inverse_dynamics (N m | N)
        bias_torques         f(q, qd, wrenches=None, gravity=None)       rd.bias_torques
        gravity_torques      f(q, gravity=None)                          rd.gravity_torques
        inertia_matrix       f(q)                                        rd.inertia_matrix (..., n, n)
        forward_dynamics     f(q, qd, tau, wrenches=None, gravity=None)  rd.forward_dynamics (..., n)
        regressor            f(q, qd, qdd, gravity=None)                 rd.regressor (standard, friction
                                                                         columns) or
                                                                         rd.base_parameters(robot).regressor
        inverse_dynamics_    f(q, qd, qdd, wrenches=None, gravity=None)  rd.inverse_dynamics_derivatives
        derivatives                                                      (dtau_dq, dtau_dqd)
        forward_dynamics_    f(q, qd, tau, wrenches=None, gravity=None)  rd.forward_dynamics_derivatives
        derivatives                                                      (dqdd_dq, dqdd_dqd, dqdd_dtau)
        jacobian             f(q)                                        rd.jacobian(robot, q, frame, point)
                                                                         (..., 6, n)
        jacobian_dot_qd      f(q, qd)                                    rd.jacobian_dot_qd(robot, q, qd,
                                                                         frame, point) (..., 6)
        ===================  ==========================================  =================================

        The derivative kinds differentiate the customized inverse or direct dynamic model in forward mode
        (:mod:`robodyn.symbolic.derivative_model`), the kinematics kinds trace the forward recursion
        (:mod:`robodyn.symbolic.kinematics_model`; no ``gravity`` or ``params``); every back end has both.

        Batched over leading axes, arguments checked (InputError naming the argument), float32 in →
        float32 out (computed in float64). ``out=`` (keyword, C and NumPy back ends, fixed or floating base)
        takes the result's array, checked on entry (exactly the result's shape and dtype, a derivative kind's
        stacked (..., k·n, n) blocks; writeable, C-contiguous, sharing no memory with an argument), and is
        returned; after an error its contents are unspecified.  One state of 1-D float64 arrays is checked and
        evaluated by the library's C entry without Python code (docs/symbolic.md, "Results into your array"
        and "One state per call").

    Raises
    ------
    CompilerNotFoundError
        When backend="c" and no C compiler exists (message says to install one or use backend="numpy").
    CompileTimeoutError
        When ``timeout`` is reached.
    CompileError
        When the compiler fails or the cache folder (``ROBODYN_CACHE``) cannot be used.
    ModelError
        When the model is singular for every q (e.g. forward dynamics of a joint that moves no mass).

    Notes
    -----
    Compiled libraries are cached by a hash of the generated source (which holds the robot's numbers but not its
    name, so a renamed copy of a robot reuses the library), compiler, flags and robodyn version, and
    verified (SHA-256 sidecar) before they are loaded: a corrupt or foreign file is rebuilt, never loaded.
    """
    floating = getattr(robot, "base", "fixed") != "fixed"  # free-flyer arrays through the augmented robot's model
    if floating:
        if parameters_input:
            raise InputError(f"robot '{robot.name}' has a {robot.base} base: parameters_input is for fixed-base "
                             "robots")
        check_frame_point(kind, frame, point)  # its kinds are dynamics kinds, which take no frame or point
        if backend == "jax":
            raise InputError(f"robot '{robot.name}' has a {robot.base} base: backend='jax' is for fixed-base robots "
                             "(robodyn.jax.floating_inverse_dynamics and its siblings trace floating bases)")
    if backend == "cuda":
        from robodyn.symbolic.cuda import CudaModel

        if floating:
            return FloatingCompiledModel(robot, kind, lambda augmented, k: CudaModel(augmented, k, parameters, dtype),
                                         parameters, backend)
        return CudaModel(robot, kind, parameters, dtype, frame, None if point is None else _point(point))
    if backend == "jax":
        from robodyn.symbolic.jax_model import JaxModel

        if dtype != "float64":
            raise InputError(f"dtype = {dtype!r} is for backend='cuda'; the JAX function computes in its inputs' dtype")
        return JaxModel(robot, kind, parameters, frame, None if point is None else _point(point))
    if dtype != "float64":
        raise InputError(f"dtype = {dtype!r} is for backend='cuda'; the C and NumPy backends compute in float64")
    if floating:
        return FloatingCompiledModel(
            robot, kind, lambda augmented, k: CompiledModel(augmented, k, parameters, backend, timeout, False, threads),
            parameters, backend)
    return CompiledModel(robot, kind, parameters, backend, timeout, parameters_input, threads, frame, point)
