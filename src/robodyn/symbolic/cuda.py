"""``rd.compile(robot, kind, backend="cuda")``: a customized model as a CUDA kernel (NVRTC through CuPy).

One thread evaluates one state; arrays live on the GPU in structure-of-arrays layout (entry k of state i at
``k*count + i``), so the threads of a warp read and write consecutive addresses. The inertial parameters (and
friction coefficients) are an input of the kernel, so one compiled kernel serves nominal and identified
parameters (identification sweeps): ``f(q, qd, qdd, params=P)`` with P of shape (P,) or (..., P).

CuPy (``pip install robodyn[cuda]``) and an NVIDIA GPU are needed to run it; the kernel source itself is
generated and tested everywhere (:func:`robodyn.symbolic.codegen.cuda_code.host_shim_source` runs it on the CPU).
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from robodyn.errors import InputError, RobodynError
from robodyn.model.workspace import WORKSPACE
from robodyn.symbolic.codegen import cuda_code
from robodyn.symbolic.derivative_model import DERIVATIVE_KINDS, derivative_record, parameters_input_model
from robodyn.symbolic.kinematics_model import KINEMATICS_KINDS, check_frame_point, kinematics_model
from robodyn.symbolic.models import JOINT_ARGUMENTS, canonical_kind, customized_model, overflow_error, pivot_error

#: threads per block
BLOCK = 128

#: CUresult of a launch from a thread where no CUDA context is current yet
CUDA_ERROR_INVALID_CONTEXT = 201


class CudaUnavailableError(RobodynError):
    """CuPy or a CUDA device is missing: install ``robodyn[cuda]`` on a machine with an NVIDIA GPU."""


def _cupy():
    try:
        import cupy
    except ImportError:
        raise CudaUnavailableError("backend='cuda' needs CuPy and an NVIDIA GPU: pip install 'robodyn[cuda]' "
                                   "(or cupy-cuda12x); use backend='c' on the CPU") from None
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CuPy raises its own runtime errors when no driver or device is present
        raise CudaUnavailableError(f"backend='cuda': no usable CUDA device ({exc}); use backend='c'") from None
    return cupy


def cuda_launch() -> int:
    """The address of the CUDA driver's ``cuLaunchKernel``, loaded once per process."""
    def load():
        try:
            return ctypes.cast(ctypes.CDLL("libcuda.so.1").cuLaunchKernel, ctypes.c_void_p).value
        except OSError as exc:
            raise CudaUnavailableError(f"the CUDA driver (libcuda.so.1) cannot be loaded ({exc})") from None

    return WORKSPACE.shared("cuLaunchKernel", load)


class ParameterBlock:
    """The parameters of one kernel as ``cuLaunchKernel`` takes them (an array of pointers to each parameter's
    value: the state count, the arrays' device addresses, the by-value struct ``rd_shared``), made once per launch
    plan and refilled at each call. CuPy's own kernel call converts every argument anew: on an H200's host a call
    of :meth:`CudaModel.soa` took 23.5 µs of host time that way and 16.9 µs with this block and CuPy's binding of
    ``cuLaunchKernel``, where the GPU spends 8 µs on a batch of 10^4 states (docs/scaling.md, "Measured on a
    GPU").

    ``inputs`` device addresses precede the struct (of ``struct_bytes``, 0 for none), ``outputs`` follow it: the
    kernel's parameter order (:func:`robodyn.symbolic.codegen.cuda_code.kernel_source`)."""

    def __init__(self, function: int, inputs: int, struct_bytes: int, outputs: int):
        self._function, self._lock = function, threading.Lock()
        self._count = ctypes.c_int64()
        self._addresses = [ctypes.c_void_p() for _ in range(inputs + outputs)]
        self._struct, self._held = ctypes.create_string_buffer(max(struct_bytes, 1)), None
        values = [self._count, *self._addresses[:inputs], *([self._struct] if struct_bytes else []),
                  *self._addresses[inputs:]]
        self._params = (ctypes.c_void_p * len(values))(*map(ctypes.addressof, values))
        self._address = ctypes.addressof(self._params)

    def __call__(self, launch, count: int, addresses, struct, stream: int) -> None:
        """Launch ``count`` states (one thread each) on ``stream`` with the arrays at ``addresses`` (inputs, then
        outputs) and ``struct`` (a one-element structured array, or None) through ``launch`` (CuPy's
        ``cuda.driver.launchKernel``, which raises on a failed launch)."""
        with self._lock:  # the block is shared: fill and launch as one step (the driver copies it at the launch)
            self._count.value = count
            for slot, address in zip(self._addresses, addresses):
                slot.value = address
            if struct is not None and struct is not self._held:
                ctypes.memmove(self._struct, struct.ctypes.data, struct.nbytes)
                self._held = struct
            launch(self._function, (count + BLOCK - 1) // BLOCK, 1, 1, BLOCK, 1, 1, 0, stream, self._address, 0)


def kernel_model(robot, kind: str, parameters: str = "standard", frame=None, point=None):
    """The customized model a CUDA kernel evaluates: (model, parameter names, their robot-file values).

    Gravity is an input (a constant for the inertia matrix); the inertial parameters and friction coefficients
    are an input ``params`` except for the regressor (which has none), and the derivative kinds differentiate that
    model (:func:`robodyn.symbolic.derivative_model.parameters_input_model`); the kinematics kinds (J and J̇q̇ of
    ``frame``, at ``point``) have neither gravity nor parameters.  :class:`CudaModel` compiles it;
    :func:`robodyn.symbolic.codegen.cuda_code.host_shim_source` runs the same kernel text on the CPU.
    """
    kind = canonical_kind(kind, tuple(JOINT_ARGUMENTS))
    if kind in KINEMATICS_KINDS:
        return kinematics_model(robot, kind, frame, point), [], np.zeros(0)
    gravity = "constant" if kind == "inertia_matrix" else "input"
    if kind == "regressor":
        return (customized_model(robot, kind, parameters, gravity=gravity, friction=parameters == "standard"), [],
                np.zeros(0))
    return parameters_input_model(robot, kind, parameters=parameters, gravity=gravity)[:3]


def call_arguments(f, label: str, args, gravity, params, asarray) -> tuple[list, list]:
    """The arguments of a call of a kernel model ``f`` (:class:`CudaModel` or
    :class:`robodyn.symbolic.jax_model.JaxModel`): (joint arrays converted by ``asarray``, [(name, value, size)]
    of gravity and params with the robot's values for None), their count and last axes checked (InputError
    naming the argument and quoting the signature)."""
    takes_gravity = any(a.name == "gravity" for a in f.model.arguments)
    if len(args) != len(f.joint_names):
        raise InputError(f"{label} {f.kind} of robot '{f.robot.name}' takes ({', '.join(f.joint_names)}"
                         f"{', gravity=None' if takes_gravity else ''}"
                         f"{', params=None' if f.parameter_names else ''})")
    n = f.robot.n
    joint = [asarray(a) for a in args]
    for name, a in zip(f.joint_names, joint):
        if a.ndim == 0 or a.shape[-1] != n:
            raise InputError(f"argument '{name}' has shape {a.shape}; it must have shape (..., {n})")
    extra = []
    if takes_gravity:
        extra.append(("gravity", f.robot.gravity if gravity is None else gravity, 3))
    if f.parameter_names:
        extra.append(("params", f.nominal_parameters if params is None else params, len(f.parameter_names)))
    for name, a, size in extra:
        if np.shape(a)[-1:] != (size,):
            raise InputError(f"argument '{name}' has shape {np.shape(a)}; expected (..., {size})")
    return joint, extra


class CudaModel:
    """Callable customized model evaluated on the GPU; results are CuPy arrays (NumPy inputs are copied over).

    Attributes
    ----------
    model : CustomizedModel
        The generated model (gravity as an input, parameters as an input except for the regressor).
    source : str
        The CUDA source of the kernel.
    parameter_names : list of str, nominal_parameters : ndarray
        Names and robot-file values of the ``params`` argument.
    """

    def __init__(self, robot, kind: str, parameters: str = "standard", dtype: str = "float64", frame=None,
                 point=None):
        kind = canonical_kind(kind, tuple(JOINT_ARGUMENTS))
        check_frame_point(kind, frame, point)
        if dtype not in ("float64", "float32"):
            raise InputError(f"dtype = {dtype!r}; choose 'float64' or 'float32'")
        cp = _cupy()
        self.robot, self.kind, self.parameters, self.dtype = robot, kind, parameters, np.dtype(dtype)
        self.joint_names = JOINT_ARGUMENTS[kind]
        self.model, self.parameter_names, self.nominal_parameters = kernel_model(robot, kind, parameters, frame,
                                                                                 point)
        self._cp, self._kernels, self._plans, self._struct = cp, {}, {}, None
        self._size = cuda_code.output_size(self.model)
        self.source = self._kernel(self.joint_names)[0]

    def _kernel(self, per_state, rows: bool = False):
        """(source, CuPy kernel, struct type, places of the arguments) for the layout whose per-state arguments
        are ``per_state`` (:func:`robodyn.symbolic.codegen.cuda_code.layout`), states as columns or as ``rows``;
        compiled by NVRTC at its first launch and kept."""
        key = (tuple(per_state), rows)
        if key not in self._kernels:
            source = cuda_code.kernel_source(self.model, "rd_kernel", self.dtype.name, key[0], rows)
            kernel = self._cp.RawKernel(source, "rd_kernel", options=("--std=c++14",))
            self._kernels[key] = (source, kernel, cuda_code.shared_dtype(self.model, self.dtype.name, key[0]),
                                  cuda_code.layout(self.model, key[0], self.dtype.name))
        return self._kernels[key]

    def soa(self, *arrays, out=None):
        """Evaluate on structure-of-arrays arrays, one per model argument in order (q, …, gravity, params):
        a CuPy array of shape (m, count) for per-state values, or an array of shape (m,) for one value shared
        by all states (give these as NumPy arrays: they travel by value with the launch, and a CuPy array is
        first copied back to the host). Returns the output as (output size, count), written into ``out`` when
        given (a C-contiguous CuPy array of that shape and the model's dtype). No checks of the inputs or of
        singular pivots: the fastest path, for data kept on the GPU."""
        return self._launch(arrays, out)[0]

    def _launch(self, arrays, out=None):
        """(output (output size, count), device flag of the lowest failed pivot check or None)."""
        cp = self._cp
        block, shared, pointers, values = self._plan(tuple([a.ndim == 2 for a in arrays]))
        count = arrays[pointers[0]].shape[1]
        size = (self._size, count)
        if out is None:
            out = cp.empty(size, dtype=self.dtype)
        elif not (isinstance(out, cp.ndarray) and out.shape == size and out.dtype == self.dtype
                  and out.flags.c_contiguous):
            raise InputError(f"out must be a C-contiguous CuPy array of shape {size} and dtype {self.dtype}")
        # held until the launch is queued: a converted array freed earlier could hand its memory to the next
        # allocation (CuPy's pool orders reuse by stream, after the launch)
        arguments = [self._device(arrays[k], count) for k in pointers] + [out]
        struct = self._by_value(shared, [arrays[k] for k in values]) if values else None
        singular = None
        if self.model.checks:
            singular = cp.full(1, len(self.model.checks), dtype=np.int32)
            arguments.append(singular)
        addresses = [a.data.ptr for a in arguments]
        if count:
            driver, stream = cp.cuda.driver, cp.cuda.get_current_stream().ptr
            try:
                block(driver.launchKernel, count, addresses, struct, stream)
            except driver.CUDADriverError as exc:
                if getattr(exc, "status", None) != CUDA_ERROR_INVALID_CONTEXT:
                    raise RobodynError(f"CUDA {self.kind}: the kernel launch failed ({exc})") from None
                cp.cuda.runtime.free(0)  # a thread that has not used CUDA yet: make its context current
                block(driver.launchKernel, count, addresses, struct, stream)
        return out, singular

    def _device(self, a, count: int):
        """The GPU array of an argument of :meth:`soa`: (m, count) per state or (m,) shared, C-contiguous (the
        kernel reads entry k of state i at k*count + i), in the model's dtype. Kept when it is one already: the
        arrays passed from call to call to the same (preallocated) places."""
        if type(a) is not self._cp.ndarray or a.dtype != self.dtype:
            a = self._cp.asarray(a, dtype=self.dtype)
        if not a.flags.c_contiguous or (a.ndim == 2 and a.shape[1] != count):
            raise InputError(f"soa takes C-contiguous arrays of shape (m, {count}) per state and (m,) shared; got "
                             f"shape {a.shape}{'' if a.flags.c_contiguous else ' (not C-contiguous)'}")
        return a

    def _plan(self, per_state):
        """(parameter block, struct type, indices of the arguments passed as pointers, the first a per-state one,
        indices of those passed by value) for the arguments whose ``per_state`` flags are given, kept: working them
        out costs more host time than launching a small batch."""
        if per_state not in self._plans:
            names = [a.name for a in self.model.arguments]
            _, kernel, shared, places = self._kernel([n for n, flag in zip(names, per_state) if flag])
            pointers = [k for k, n in enumerate(names) if places[n] != "by_value"]
            block = ParameterBlock(kernel.kernel.ptr, len(pointers), shared.itemsize if shared.names else 0,
                                   1 + bool(self.model.checks))
            self._plans[per_state] = (block, shared, pointers,
                                      [k for k, n in enumerate(names) if places[n] == "by_value"])
        return self._plans[per_state]

    def _by_value(self, shared, arrays):
        """The struct ``shared`` of the values passed by value, reused while they stay the same: filling a NumPy
        structured array costs more host time than the launch of a small batch (the key is built in a plain loop:
        a generator costs a microsecond here)."""
        values, key = [], [shared]
        for a in arrays:
            if type(a) is not np.ndarray or a.dtype != self.dtype:
                a = np.asarray(a.get() if hasattr(a, "get") else a, dtype=self.dtype)
            values.append(a)
            key.append(a.tobytes())
        if self._struct is None or self._struct[0] != key:
            self._struct = (key, cuda_code.shared_value(shared, values))
        return self._struct[1]

    def __call__(self, *args, gravity=None, params=None):
        cp, n = self._cp, self.robot.n
        joint, extra = call_arguments(self, "CUDA", args, gravity, params, lambda a: cp.asarray(a, dtype=self.dtype))
        batch = np.broadcast_shapes(*(a.shape[:-1] for a in joint))
        count = math.prod(batch)
        arrays = [cp.ascontiguousarray(cp.broadcast_to(a, batch + (n,)).reshape(count, n).T) for a in joint]
        for name, a, size in extra:
            if np.ndim(a) == 1:  # one value for all states: passed by value with the launch, from the host
                arrays.append(np.asarray(a.get() if isinstance(a, cp.ndarray) else a, dtype=self.dtype))
            else:
                a = cp.asarray(a, dtype=self.dtype)
                arrays.append(cp.ascontiguousarray(cp.broadcast_to(a, batch + (size,)).reshape(count, size).T))
        if not all(bool(np.all(np.isfinite(a))) if isinstance(a, np.ndarray) else bool(cp.all(cp.isfinite(a)))
                   for a in arrays):
            raise InputError("an argument contains NaN or inf; give finite values")
        out, singular = self._launch(arrays)
        if singular is not None and int(singular[0]) < len(self.model.checks):
            joint = self.model.checks[int(singular[0])][0]
            raise pivot_error(self.robot.name, f"CUDA {self.kind}", joint)
        if not bool(cp.all(cp.isfinite(out))):
            raise overflow_error(self.robot.name, f"CUDA {self.kind}", self.dtype.name)
        out = out.T.reshape(batch + tuple(self.model.output_shape))
        return derivative_record(self.kind, out, n) if self.kind in DERIVATIVE_KINDS else out

    def kernel_attributes(self) -> dict:
        """``{"registers": …, "local_bytes": …}``: the registers and the local memory (bytes; register spills) per
        thread of the compiled kernel. A kernel at the 255-register ceiling spills, which bounds its throughput
        below the memory bandwidth (large trees: docs/scaling.md, "Measured on a GPU")."""
        kernel = self._kernel(self.joint_names)[1]
        return {"registers": int(kernel.num_regs), "local_bytes": int(kernel.local_size_bytes)}

    def jax(self, gravity=None, params=None):
        """This model as a function of JAX arrays that runs inside ``jax.jit``: ``g = f.jax(); g(q, ...)`` with
        arrays of shape (..., n) on the GPU returns (..., output shape), launching this kernel (states as rows)
        from XLA (:mod:`robodyn.symbolic.cuda_jax`). ``gravity`` (3,) in m/s² and ``params`` (P,) are fixed
        here (None: the robot's). It needs JAX with CUDA on the device CuPy uses and a C compiler (the handler is
        compiled once). The inverse dynamics has a first derivative (``jax.grad``, ``jax.jvp``, ``jax.jacfwd``)
        from the kernels of ∂Γ/∂q, ∂Γ/∂q̇ and A(q), compiled here too (:func:`robodyn.symbolic.cuda_jax.
        with_derivative`); the other kinds have none (``backend="jax"``). Kinds with pivot checks (forward
        dynamics) are not offered: call ``f`` for those."""
        from robodyn.symbolic import cuda_jax

        if self.model.checks:
            raise InputError(f"CUDA {self.kind} checks pivots, which the JAX call does not report; call the "
                             "model itself (CuPy arrays) or use backend='jax'")
        launch = cuda_launch()
        kernel = self._kernel(self.joint_names, rows=True)[1]
        cuda_jax.register("CUDA")
        index = cuda_jax.add_kernel(kernel.kernel.ptr, launch)
        f = cuda_jax.jax_function(self, index, gravity, params)
        if self.kind != "inverse_dynamics":
            return f
        # the derivative's kernels, with the same gravity and parameters (matched by name); a parameter that only
        # they take has no effect on Γ, hence none on its derivatives (the inertia matrix's expressions can keep
        # terms that cancel, e.g. MZ of a prismatic leaf link's axis), and keeps its robot-file value
        values = dict(zip(self.parameter_names, np.asarray(self.nominal_parameters if params is None else params,
                                                           dtype=float)))
        made = [CudaModel(self.robot, kind, self.parameters, self.dtype.name)
                for kind in ("inverse_dynamics_derivatives", "inertia_matrix")]
        derivatives, inertia = (m.jax(gravity=gravity, params=[values.get(k, v) for k, v in
                                                               zip(m.parameter_names, m.nominal_parameters)])
                                for m in made)
        return cuda_jax.with_derivative(f, derivatives, inertia)

    def __repr__(self) -> str:
        return f"CudaModel({self.robot.name!r}, {self.kind!r}, parameters={self.parameters!r}, dtype={self.dtype.name!r})"
