"""CUDA source of a customized model: one thread per state, structure-of-arrays layout.

    extern "C" __global__ void NAME(long count, const real *q, ..., const rd_shared shared, real *out
                                    [, int *singular])

The layout of the arguments is fixed when the source is generated (``per_state``):

- an argument ``a`` of size m given **per state** is a pointer holding entry k of state i at ``a[k*count + i]``
  (structure of arrays: the threads of a warp read consecutive addresses);
- the arguments that hold **one value for all states** (gravity, the inertial parameters) travel by value in
  the struct ``rd_shared``, a kernel parameter. Kernel parameters live in a constant bank that every
  instruction reads as an operand, so these values take no registers: a 7-joint arm's 62 parameters held in
  registers (124 of them in double) would leave room for few threads per multiprocessor, too few to hide the
  latency of memory. When they exceed :data:`BY_VALUE_BYTES` they stay pointers read at ``a[k]``.

The output is written as the per-state arguments are read: entry k of state i at ``out[k*count + i]``.
``real`` is double or float (``dtype``); in float the numeric literals are float too, so that the kernel never
computes in double. A model with pivot checks (forward dynamics: the articulated inertias H_j of Khalil &
Dombre [9.116]) takes ``singular``, which a state whose pivot k fails the numeric formulations' relative test
lowers to k (``atomicMin``): the states that pass never write it, so the check costs no memory traffic.

The same text compiles as C99 when ``RD_HOST_SHIM`` is defined: :func:`host_shim_source` wraps it in a loop over
the states, which is how the kernel is tested on machines without a GPU.
"""

from __future__ import annotations

import re

import numpy as np

from robodyn.sanitize import comment, identifier
from robodyn.arrays import PIVOT_EPS
from robodyn.symbolic.codegen.printer import C, literal, statements

_FLOAT_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?![\w.])")
_TRIG = re.compile(r"^(\s*)const real (\w+) = rd_(sin|cos)\(([^()]*)\);$")

#: the most bytes of shared values passed by value: CUDA's kernel parameters are limited to 4 KiB, of which the
#: count and the pointers take the rest
BY_VALUE_BYTES = 3840

_PRELUDE = """
#ifdef RD_HOST_SHIM
#include <math.h>
typedef struct { unsigned int x, y, z; } rd_uint3;
static rd_uint3 threadIdx, blockIdx, blockDim;
#define RD_KERNEL
#define RD_DEVICE static inline
static inline void atomicMin(int *a, int v) { if (v < *a) *a = v; }
#define RD_SINCOS(x, s, c) (*(s) = rd_sin(x), *(c) = rd_cos(x))
#else
#define RD_SINCOS(x, s, c) rd_sincos_device(x, s, c)
#define RD_KERNEL extern "C" __global__
#define RD_DEVICE __device__ __forceinline__
#endif
"""


def layout(model, per_state=None, dtype: str = "float64") -> dict:
    """How each argument of ``model`` reaches the kernel: ``{name: "per_state" | "by_value" | "shared"}``.

    ``per_state``: the names of the arguments given state by state (default: all of them). The others are
    passed by value in ``rd_shared`` while their total size stays within :data:`BY_VALUE_BYTES`, else as
    pointers to one value for all states ("shared")."""
    names = [a.name for a in model.arguments]
    per_state = set(names if per_state is None else per_state)
    unknown = per_state - set(names)
    if unknown:
        raise ValueError(f"per_state names {sorted(unknown)}, not arguments of the model ({', '.join(names)})")
    size = {a.name: int(np.prod(a.shape)) for a in model.arguments}
    shared_bytes = sum(size[a] for a in names if a not in per_state) * np.dtype(dtype).itemsize
    by_value = "by_value" if shared_bytes <= BY_VALUE_BYTES else "shared"
    return {a: "per_state" if a in per_state else by_value for a in names}


def shared_dtype(model, dtype: str = "float64", per_state=None) -> np.dtype:
    """The NumPy structured type of ``rd_shared`` (fields in argument order), for CuPy to pass by value."""
    places = layout(model, per_state, dtype)
    return np.dtype([(a.name, dtype, (int(np.prod(a.shape)),)) for a in model.arguments
                     if places[a.name] == "by_value"])


def kernel_source(model, name: str, dtype: str = "float64", per_state=None) -> str:
    """CUDA C++ source of ``model`` (a :class:`~robodyn.symbolic.models.CustomizedModel`) as kernel ``name``,
    its arguments laid out as :func:`layout` says."""
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype = {dtype!r}; choose 'float64' or 'float32'")
    name = identifier(name)
    places = layout(model, per_state, dtype)
    real = "double" if dtype == "float64" else "float"
    sin, cos, sincos = ("sin", "cos", "sincos") if dtype == "float64" else ("sinf", "cosf", "sincosf")
    params = [f"const real *__restrict__ {a}" for a, p in places.items() if p != "by_value"]
    fields = [f"real {a.name}[{int(np.prod(a.shape))}];" for a in model.arguments if places[a.name] == "by_value"]
    if fields:
        params.append("const rd_shared shared")
    params.append("real *__restrict__ out")
    if model.checks:
        params.append("int *__restrict__ singular")
    lines = [
        f"/* {model.kind} of robot {comment(model.robot.name)} ({model.parameters} inertial parameters), generated by "
        f"robodyn as a CUDA kernel ({dtype}, one thread per state, structure of arrays). */",
        _PRELUDE,
        f"typedef {real} real;",
        *([f"typedef struct {{ {' '.join(fields)} }} rd_shared;"] if fields else []),
        f"RD_DEVICE real rd_sin(real x) {{ return {sin}(x); }}",
        f"RD_DEVICE real rd_cos(real x) {{ return {cos}(x); }}",
        "RD_DEVICE real rd_sign(real x) { return (real)((x > 0) - (x < 0)); }",
        "#ifndef RD_HOST_SHIM",
        f"RD_DEVICE void rd_sincos_device(real x, real *s, real *c) {{ {sincos}(x, s, c); }}",
        "#endif",
        "",
        f"RD_KERNEL void {name}(long count, {', '.join(params)}) {{",
        "    long i = (long)blockIdx.x * (long)blockDim.x + (long)threadIdx.x;",
        "    if (i >= count) return;",
    ]
    where = {"per_state": "{a}[{k}*count + i]", "by_value": "shared.{a}[{k}]", "shared": "{a}[{k}]"}

    def read(a, k, s):
        return f"const real {s} = {where[places[a]].format(a=a, k=k)};"

    bound = literal(PIVOT_EPS * np.finfo(dtype).eps)

    def check(k, pivot, scale):
        return f"if (!({pivot} > {bound}*({scale}))) atomicMin(singular, {k});"

    body = statements(model, C, read, lambda k, e: f"out[{k}*count + i] = {e};",
                      "const real {s} = {v};", "const real {s} = {e};", check=check)
    body = _sincos(body)
    if dtype == "float32":
        body = [_FLOAT_LITERAL.sub(lambda m: m.group(1) + "f", line) for line in body]
    lines += body
    lines += ["}"]
    return "\n".join(lines) + "\n"


def _sincos(body: list) -> list:
    """The sine and cosine of one argument computed by one ``sincos`` call: one range reduction instead of two
    (on the GPU, double-precision sine and cosine are mostly their reduction)."""
    trig = {}
    for k, line in enumerate(body):
        m = _TRIG.match(line)
        if m:
            trig.setdefault(m.group(4), {})[m.group(3)] = (k, m.group(2), m.group(1))
    body = list(body)
    for arg, pair in trig.items():
        if len(pair) == 2:
            (ks, s, indent), (kc, c, _) = pair["sin"], pair["cos"]
            body[min(ks, kc)] = f"{indent}real {s}, {c}; RD_SINCOS({arg}, &{s}, &{c});"
            body[max(ks, kc)] = None
    return [line for line in body if line is not None]


def host_shim_source(model, name: str, dtype: str = "float64", per_state=None) -> tuple[str, str]:
    """(C99 source, cffi declarations) running the kernel of :func:`kernel_source` on the CPU, state by state:
    ``NAME_host(count, a..., out[, singular])`` takes every argument as a pointer, laid out as in the kernel
    (the values passed by value are copied into ``rd_shared`` first)."""
    name = identifier(name)
    places = layout(model, per_state, dtype)
    real = "double" if dtype == "float64" else "float"
    params = ", ".join([f"const {real} *{a}" for a in places] + [f"{real} *out"]
                       + (["int *singular"] if model.checks else []))
    args = [a for a, p in places.items() if p != "by_value"]
    fill = "".join(f" memcpy(shared.{a}, {a}, sizeof shared.{a});" for a, p in places.items() if p == "by_value")
    if fill:
        args.append("shared")
        fill = " rd_shared shared;" + fill
    args += ["out"] + (["singular"] if model.checks else [])
    source = "#define RD_HOST_SHIM\n#include <string.h>\n" + kernel_source(model, name, dtype, per_state) + f"""
void {name}_host(long count, {params}) {{
    blockDim.x = 1; threadIdx.x = 0;{fill}
    for (long i = 0; i < count; ++i) {{ blockIdx.x = (unsigned int)i; {name}(count, {', '.join(args)}); }}
}}
"""
    return source, f"void {name}_host(long count, {params});"


def output_size(model) -> int:
    return int(np.prod(model.output_shape))
