"""Single states: straight-line code generated per robot from the same recursions, run in Python or compiled to C.

For one state, each NumPy operation costs about a microsecond whatever the batch size, and even the component
recursions on Python floats spend most of their time deciding which products are zero.  So for a 1-D float64 state
the public functions call a *kernel*: the very recursion the batched path runs (``rnea_components``, the composite
links, the recursive direct model), executed once on the recording scalars of :mod:`robodyn.dynamics.trace`
(an exact tape: the robot's exact zeros and ones folded away, repeated expressions computed once, only
rewritings that keep every IEEE result), whose straight-line IR this module writes as lines of Python.  The result is
compiled by Python's own ``compile`` into a function of floats, kept in the per-robot workspace
(:mod:`robodyn.model.workspace`, keyed by the robot's content) and reused for every later single state.  It
computes the same operations in the same order as the general path, so both give the same numbers.  This module
is the kernel emitter; :mod:`robodyn.dynamics.executor` decides when a kernel runs, in Python or compiled.

Every formulation has its kernels: Newton–Euler, composite links and the recursive direct model (the defaults,
behind robodyn.native's compiled entry when it is available), Walker–Orin, Gibbs–Appell (Mata et al.), Kozłowski's
spatial operators with the Kalman filter and Bryson–Frazier smoother, and the Cholesky method (Khalil & Dombre
[9.95]–[9.96]: H, A and the solve of :func:`cholesky_components`).  A temporary used once is written into its use,
so a Python kernel costs about one Python operation per floating-point operation.

The methods that robodyn.native does not serve also have their kernels written as C
(:mod:`robodyn.dynamics.fast_c`: the recorded operations, same order, same folding) and compiled through
robodyn's compile cache once a robot has run ``executor.COMPILE_AFTER`` single states of that kernel (or, in a new
process, loaded from the cache); the compiled entry is kept in the workspace too and costs about a
microsecond per call, 10–40 times less than the Python kernel.  Without a C compiler, with ``ROBODYN_NATIVE=0`` or
after a failed build, the Python kernel runs; a state the compiled kernel declines (NaN/inf, a singular pivot)
takes the general path and its message, as a state the Python kernel declines does.
"""

from __future__ import annotations

from types import MappingProxyType
import math
import re

from robodyn.dynamics import fast_c
from robodyn.arrays import pivot_too_small
from robodyn.model.friction import friction_components
from robodyn.dynamics.trace import trace_kernel
from robodyn.spatial import FLOAT


class Fallback(Exception):
    """Raised by a kernel for a state it does not handle (a singular direct model): the general path then runs and
    reports it with its full message."""


_NAME = re.compile(r"\bt\d+\b")
#: longest expression written into its use (Python's parser limits the nesting of parentheses)
_INLINE_CHARS = 400


#: each kernel operation as Python; :mod:`robodyn.dynamics.fast_c` writes the same operations as C
_PYTHON = MappingProxyType({"+": "{} + {}", "-": "{} - {}", "*": "{} * {}", "/": "{} / {}", "**": "{} ** {}", "neg": "-{}",
           "abs": "abs({})", "_cos": "_cos({})", "_sin": "_sin({})", "_exp": "_exp({})", "_sign": "_sign({})",
           "check": "if not {} > {}: raise _Fallback"})


#: each operation of an exact tape (:mod:`robodyn.dynamics.trace`) as a kernel operation, its operands in order
_KERNEL_OP = MappingProxyType({"mul": "*", "cmul": "*", "div": "/", "divc": "/", "cdiv": "/", "pow": "**",
                               "abs": "abs", "cos": "_cos", "sin": "_sin", "exp": "_exp", "sign": "_sign",
                               "check": "check"})


def _statements(build, counts: dict[str, int]):
    """Trace ``build`` on an exact tape (:func:`robodyn.dynamics.trace.trace_kernel`) and write its IR as kernel
    operations: (the kept lines (name or None for a check, Python line, (operation, *operand codes)), the
    output codes).  The operands are variable names (``t12``, ``q0``) and ``repr`` literals."""
    tape, outputs, kept = trace_kernel(build, counts)
    code: dict[int, str] = {}

    def c(x) -> str:
        return code[x] if type(x) is int else repr(float(x))

    lines = []
    for k in kept:
        op, *a = tape.ops[k]
        if op == "in" or (op == "let" and a[1] == 1):
            code[k] = a[0] if op == "in" else code[a[0]]
            continue
        if op == "add":
            stmt = ("+" if a[1] == 1 else "-", c(a[0]), c(a[2]))
        elif op == "addc":
            stmt = ("+", c(a[1]), c(a[0])) if a[0] > 0 else ("-", c(a[1]), c(-a[0]))
        else:  # the operands in the IR's order
            stmt = ("neg", c(a[0])) if op == "let" else (_KERNEL_OP[op], *map(c, a))
        line = _PYTHON[stmt[0]].format(*stmt[1:])
        if op == "check":
            lines.append((None, line, stmt))
        else:
            name = code[k] = f"t{k}"
            lines.append((name, f"{name} = {line}", stmt))
    return lines, [c(o) for o in outputs]


def _body(kept, outputs) -> str:
    """The Python lines of the kernel, with every variable used once written into its single use, parenthesised:
    the same operations in the same order, without a store and a load per operation (about a third of the time
    of a kernel)."""
    results = set(outputs)
    uses: dict[str, int] = {}
    for name, line, _ in kept:
        for ref in _NAME.findall(line if name is None else line.split(" = ", 1)[1]):
            uses[ref] = uses.get(ref, 0) + 1
    inline: dict[str, str] = {}
    out = []
    for name, line, _ in kept:
        code = line if name is None else line.split(" = ", 1)[1]
        code = _NAME.sub(lambda m: inline.pop(m.group(0), m.group(0)), code)
        if name is not None and uses.get(name) == 1 and name not in results and len(code) < _INLINE_CHARS:
            inline[name] = f"({code})"
        else:
            out.append("    " + (code if name is None else f"{name} = {code}"))
    return "\n".join(out)


def generate(name: str, build, counts: dict[str, int]):
    """Trace ``build(backend, **inputs)`` (lists of recording scalars named by ``counts``) into a Python function.

    Returns the function, of the inputs' floats in the order of ``counts``, giving a tuple of floats.
    """
    kept, outputs = _statements(build, counts)
    args = ", ".join(f"{key}{k}" for key, n in counts.items() for k in range(n))
    source = f"def {name}({args}):\n" + _body(kept, outputs) + f"\n    return ({''.join(o + ', ' for o in outputs)})\n"
    namespace = {"_cos": math.cos, "_sin": math.sin, "_exp": math.exp, "_sign": FLOAT.sign, "_Fallback": Fallback}
    exec(compile(source, f"<robodyn kernel {name}>", "exec"), namespace)  # code generated above from the recursions
    return namespace[name]


def generate_c(name: str, build, counts: dict[str, int]) -> str:
    """The C99 source of the same kernel (:mod:`robodyn.dynamics.fast_c`): the operations of :func:`generate`'s
    function, in the same order, as C with a CPython entry ``single(*inputs, out)``."""
    kept, outputs = _statements(build, counts)
    return fast_c.source(kept, counts, outputs, name)


def torque_kernel(robot, rigid):
    """``build`` of an inverse-dynamics kernel: Γ = Γ_rigid + Ia q̈ + Γ_f(q̇) [9.94], with Γ_rigid from
    ``rigid(robot, q, qd, qdd, g, backend=...)`` (the formulation's own recursion on component scalars)."""

    def build(backend, q, qd, qdd, g):
        tau = rigid(robot, q, qd, qdd, g, backend=backend)
        friction = friction_components(robot, qd, backend)
        return [t + float(Ia) * a + f for t, Ia, a, f in zip(tau, robot.derived.Ia, qdd, friction)]

    return build


def cholesky_components(A, b, check: bool = True) -> list:
    """x with A x = b for a symmetric positive-definite A (n rows of n scalars) and b (n scalars): the square-root-free
    Cholesky factorisation A = L D Lᵀ, then L y = b, Lᵀ x = D⁻¹ y (Khalil & Dombre [9.96]; Mata et al. Table 3).

    On a kernel's recording scalars every pivot d_k records the relative test of
    :func:`robodyn.arrays.pivot_too_small`, against Σ|A_ii| (never below the max|A_ii| of the batched test, so a
    state the kernel accepts the batched path accepts too); a pivot that fails it raises :class:`Fallback`, and the
    general path reports the singular model (``check=False``: no test, for symbolic scalars that cannot be
    compared).  Structural zeros of A (other branches of a tree) cost nothing.
    """
    n = len(b)
    scale = None
    L = [[0.0] * n for _ in range(n)]
    LD = [[0.0] * n for _ in range(n)]  # L_ij d_j
    d = []
    for k in range(n):
        dk = A[k][k]
        for j in range(k):
            dk = dk - L[k][j] * LD[k][j]
        if check and scale is None:
            scale = sum((abs(A[i][i]) for i in range(1, n)), abs(A[0][0]))
        if check and pivot_too_small(dk, lambda: scale, k):
            raise Fallback
        d.append(dk)
        for i in range(k + 1, n):
            t = A[i][k]
            for j in range(k):
                t = t - L[i][j] * LD[k][j]
            LD[i][k] = t
            L[i][k] = t / dk
    y = []
    for i in range(n):
        t = b[i]
        for j in range(i):
            t = t - L[i][j] * y[j]
        y.append(t)
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        t = y[i] / d[i]
        for j in range(i + 1, n):
            t = t - L[j][i] * x[j]
        x[i] = t
    return x
