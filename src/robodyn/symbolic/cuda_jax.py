"""A customized model's CUDA kernel inside ``jax.jit``: ``rd.compile(robot, kind, backend="cuda").jax()``.

XLA's own GPU code for a customized model (``backend="jax"``) runs the model as several kernels (the joints' sines
and cosines apart, the stack of the outputs apart) and reaches about a sixth of what the CUDA kernel does
(docs/scaling.md, "Measured on a GPU"). This function instead launches robodyn's kernel (NVRTC through CuPy) as an
XLA foreign-function call on XLA's own stream: it takes and returns JAX arrays, composes with ``jax.jit`` and
``jax.vmap``, and computes exactly what :class:`robodyn.symbolic.cuda.CudaModel` computes. The inverse dynamics has
a derivative (:func:`with_derivative`: ``jax.jvp``, ``jax.grad``, ``jax.jacfwd``/``jacrev``, first order), from the
kernels of ∂Γ/∂q, ∂Γ/∂q̇ and of the inertia matrix; the other kinds have none (``backend="jax"``).

The handler (``codegen/xla_ffi.c``) is compiled once per machine with the C compiler against the installed
jaxlib's FFI header (robodyn's compile cache) and registered with XLA for CUDA under :data:`TARGET`.
"""

from __future__ import annotations

import math
import hashlib
from importlib import resources
from pathlib import Path

import numpy as np

from robodyn.errors import InputError
from robodyn.model.workspace import WORKSPACE
from robodyn.symbolic.codegen import cuda_code

#: the name of robodyn's handler in XLA's registry of foreign functions
TARGET = "robodyn_cuda_kernel"

DECLARATIONS = "int64_t rd_xla_add(void *function, void *launch, int host); void *rd_xla_kernel(void *frame);"


def handler():
    """(ffi, lib) of robodyn's XLA FFI handler, compiled against the installed jaxlib's ``xla/ffi/api/c_api.h``
    (its hash in the source, so a new jaxlib builds a new library); loaded once per process (the workspace)."""
    return WORKSPACE.shared("xla_ffi_handler", _build_handler)


def _build_handler():
    import jax

    from robodyn.native.build import compile_library

    include = Path(jax.ffi.include_dir())
    header = (include / "xla" / "ffi" / "api" / "c_api.h").read_bytes()
    source = (f"/* XLA FFI header SHA-256 {hashlib.sha256(header).hexdigest()} */\n"
              + resources.files(cuda_code.__package__).joinpath("xla_ffi.c").read_text(encoding="utf-8"))
    ffi, lib, _ = compile_library(source, DECLARATIONS, description="compiling robodyn's XLA handler",
                                  include=(str(include),))
    return ffi, lib


def register(platform: str, name: str = TARGET) -> None:
    """Register the handler with XLA as ``name`` for ``platform`` ("CUDA"; "cpu" for the host launches), once
    per process."""
    import jax

    ffi, lib = handler()  # outside make(): the workspace holds its lock while make() runs

    def make():
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(int(ffi.cast("uintptr_t", lib.rd_xla_kernel))),
                                    platform=platform)
        return True

    WORKSPACE.shared(("xla_ffi_target", platform, name), make)


def add_kernel(function: int, launch: int, host: bool = False) -> int:
    """The handler's index of a kernel (its CUfunction, or a host function) and its launch function."""
    ffi, lib = handler()
    index = lib.rd_xla_add(ffi.cast("void *", function), ffi.cast("void *", launch), int(host))
    if index < 0:
        raise InputError("robodyn's XLA handler holds 4096 kernels, its most; reuse the functions you made")
    return int(index)


def jax_function(model, index: int, gravity=None, params=None, name: str = TARGET, block: int = 128):
    """The JAX function of a :class:`robodyn.symbolic.cuda.CudaModel` ``model`` whose states-as-rows kernel has
    the handler's ``index`` (:func:`add_kernel`): ``f(q, ...)`` of JAX arrays of shape (..., n), returning
    (..., output shape) in the model's dtype. Gravity and parameters are fixed here (None: the robot's)."""
    import jax
    import jax.numpy as jnp

    places = cuda_code.layout(model.model, model.joint_names, model.dtype.name)
    shared = cuda_code.shared_dtype(model.model, model.dtype.name, model.joint_names)
    extra = {}
    for arg, value, size in (("gravity", gravity if gravity is not None else model.robot.gravity, 3),
                               ("params", params if params is not None else model.nominal_parameters,
                                len(model.parameter_names))):
        if arg in places:
            value = np.asarray(value, dtype=model.dtype)
            if value.shape != (size,):
                raise InputError(f"argument '{arg}' has shape {value.shape}; expected ({size},)")
            if not np.all(np.isfinite(value)):
                raise InputError(f"argument '{arg}' contains NaN or inf; give finite values")
            extra[arg] = value
    struct = cuda_code.shared_value(shared, [extra[field] for field in shared.names])
    operands = [jnp.asarray(extra[a]) for a, p in places.items() if p == "shared"]
    attributes = dict(kernel=np.int64(index), block=np.int64(block), by_value=np.int64(len(shared.names) > 0),
                      shared=np.frombuffer(struct.tobytes() or b"\0", dtype=np.uint8))
    n, m = model.robot.n, cuda_code.output_size(model.model)

    def f(*joint):
        if jax.dtypes.canonicalize_dtype(model.dtype) != model.dtype:  # JAX computes in float32 unless told
            raise InputError(f"the kernel computes in {model.dtype}, which JAX has switched off: "
                             "jax.config.update('jax_enable_x64', True), or compile with dtype='float32'")
        if len(joint) != len(model.joint_names):
            raise InputError(f"CUDA {model.kind} in JAX of robot '{model.robot.name}' takes "
                             f"({', '.join(model.joint_names)})")
        arrays = [jnp.asarray(a, dtype=model.dtype) for a in joint]
        for label, a in zip(model.joint_names, arrays):
            if a.ndim == 0 or a.shape[-1] != n:
                raise InputError(f"argument '{label}' has shape {a.shape}; it must have shape (..., {n})")
        arrays = jnp.broadcast_arrays(*arrays)
        batch = arrays[0].shape[:-1]
        count = math.prod(batch)
        out = jax.ffi.ffi_call(name, jax.ShapeDtypeStruct((count, m), model.dtype), vmap_method="broadcast_all")(
            *(a.reshape(count, n) for a in arrays), *operands, **attributes)
        return out.reshape(batch + tuple(model.model.output_shape))

    return f


def with_derivative(f, derivatives, inertia):
    """``f(q, qd, qdd)`` (an inverse dynamics from :func:`jax_function`) with its first derivative for JAX's
    forward and reverse modes (``jax.custom_jvp``): dΓ = ∂Γ/∂q dq + ∂Γ/∂q̇ dq̇ + A(q) dq̈, the blocks from
    ``derivatives(q, qd, qdd)`` ((..., 2n, n): ∂Γ/∂q over ∂Γ/∂q̇, Coulomb's step not differentiated, as
    ``rd.inverse_dynamics_derivatives``) and ``inertia(q)`` ((..., n, n)), kernels too. The tangent is
    linear in (dq, dq̇, dq̈), so ``jax.grad`` transposes it; a second derivative is not offered."""
    import jax
    import jax.numpy as jnp

    @jax.custom_jvp
    def g(q, qd, qdd):
        return f(q, qd, qdd)

    @g.defjvp
    def g_jvp(primals, tangents):
        q, qd, qdd = primals
        dq, dqd, dqdd = tangents
        blocks = derivatives(q, qd, qdd)
        n = blocks.shape[-1]

        def times(a, x):
            return jnp.matmul(a, jnp.asarray(x, a.dtype)[..., None])[..., 0]

        return g(q, qd, qdd), (times(blocks[..., :n, :], dq) + times(blocks[..., n:, :], dqd)
                               + times(inertia(q), dqdd))

    return g
