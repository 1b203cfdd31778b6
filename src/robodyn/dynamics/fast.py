"""Single states: straight-line code generated per robot from the same recursions, run in Python or compiled to C.

For one state, each NumPy operation costs about a microsecond whatever the batch size, and even the component
recursions on Python floats spend most of their time deciding which products are zero.  So for a 1-D float64 state
the public functions call a *kernel*: the very recursion the batched path runs (``rnea_components``, the composite
links, the recursive direct model), executed once on recording scalars that write each operation as a line of
Python, with the robot's zeros and ones folded away and repeated expressions computed once.  The result is
compiled by Python's own ``compile`` into a function of floats, kept in the per-robot workspace
(:mod:`robodyn.model.workspace`, keyed by the robot's content) and reused for every later single state.  It
computes the same operations in the same order as the general path, so both give the same numbers.  This module
is the tracer; :mod:`robodyn.dynamics.executor` decides when a kernel runs, in Python or compiled.

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
from robodyn.spatial import FLOAT, ScalarBackend


class Fallback(Exception):
    """Raised by a kernel for a state it does not handle (a singular direct model): the general path then runs and
    reports it with its full message."""


_NAME = re.compile(r"\bt\d+\b")
#: longest expression written into its use (Python's parser limits the nesting of parentheses)
_INLINE_CHARS = 400


#: each recorded operation as Python; :mod:`robodyn.dynamics.fast_c` writes the same operations as C
_PYTHON = MappingProxyType({"+": "{} + {}", "-": "{} - {}", "*": "{} * {}", "/": "{} / {}", "**": "{} ** {}", "neg": "-{}",
           "abs": "abs({})", "_cos": "_cos({})", "_sin": "_sin({})", "_exp": "_exp({})", "_sign": "_sign({})",
           "check": "if not {} > {}: raise _Fallback"})


class _Recorder:
    """Collects the operations of a kernel; equal right-hand sides share one variable."""

    def __init__(self) -> None:
        #: (assigned name or None for a check, Python line, (operation, *operand codes))
        self.lines: list[tuple[str | None, str, tuple]] = []
        self.names: dict[str, str] = {}
        self.negated: dict[str, "_Var"] = {}  # name of −x → x

    def emit(self, op: str, *args: str) -> "_Var":
        expr = _PYTHON[op].format(*args)
        name = self.names.get(expr)
        if name is None:
            name = self.names[expr] = f"t{len(self.names)}"
            self.lines.append((name, f"{name} = {expr}", (op, *args)))
        return _Var(self, name)

    def check(self, left: str, right: str) -> None:
        self.lines.append((None, _PYTHON["check"].format(left, right), ("check", left, right)))

    def kept(self, outputs) -> list[tuple[str | None, str, tuple]]:
        """The lines that the outputs and the checks need (a negation folded into a later − may be unused)."""
        used = {o.name for o in outputs if isinstance(o, _Var)}
        kept = []
        for line in reversed(self.lines):
            if line[0] is None or line[0] in used:
                kept.append(line)
                used.update(a for a in line[2][1:] if _NAME.fullmatch(a))
        kept.reverse()
        return kept

    def body(self, outputs) -> str:
        """The Python lines of :meth:`kept`, with every variable used once written into its single use,
        parenthesised: the same operations in the same order, without a store and a load per operation (about a
        third of the time of a kernel)."""
        results = {o.name for o in outputs if isinstance(o, _Var)}
        kept = [(name, line) for name, line, _ in self.kept(outputs)]
        uses: dict[str, int] = {}
        for name, line in kept:
            for ref in _NAME.findall(line if name is None else line.split(" = ", 1)[1]):
                uses[ref] = uses.get(ref, 0) + 1
        inline: dict[str, str] = {}
        out = []
        for name, line in kept:
            code = line if name is None else line.split(" = ", 1)[1]
            code = _NAME.sub(lambda m: inline.pop(m.group(0), m.group(0)), code)
            if name is not None and uses.get(name) == 1 and name not in results and len(code) < _INLINE_CHARS:
                inline[name] = f"({code})"
            else:
                out.append("    " + (code if name is None else f"{name} = {code}"))
        return "\n".join(out)

    def inputs(self, prefix: str, count: int) -> list["_Var"]:
        return [_Var(self, f"{prefix}{k}") for k in range(count)]


def _code(x) -> str:
    if isinstance(x, _Var):
        return x.name
    return repr(float(x))


def _is(x, value: float) -> bool:
    return not isinstance(x, _Var) and x == value


class _Var:
    """A recording scalar: arithmetic on it appends a line to its recorder (constants 0 and ±1 fold away)."""

    __slots__ = ("rec", "name")
    #: comparisons record a run-time check (robodyn.arrays.pivot_too_small)
    records_checks = True

    def __init__(self, rec: _Recorder, name: str) -> None:
        self.rec, self.name = rec, name

    def _op(self, left, op: str, right) -> "_Var":
        return self.rec.emit(op, _code(left), _code(right))

    def _base(self):
        """x when this is −x, else None."""
        return self.rec.negated.get(self.name)

    def __add__(self, other):
        if _is(other, 0.0):
            return self
        if isinstance(other, _Var) and other._base() is not None:
            return self._op(self, "-", other._base())  # x + (−y) = x − y
        return self._op(self, "+", other) if self._base() is None else self._op(other, "-", self._base())

    def __radd__(self, other):
        if _is(other, 0.0):
            return self
        return self._op(other, "+", self) if self._base() is None else self._op(other, "-", self._base())

    def __sub__(self, other):
        if _is(other, 0.0):
            return self
        if isinstance(other, _Var) and other._base() is not None:
            return self + other._base()  # x − (−y) = x + y
        return self._op(self, "-", other)

    def __rsub__(self, other):
        if _is(other, 0.0):
            return -self
        return self._op(other, "-", self) if self._base() is None else self._op(other, "+", self._base())

    def _times(self, other, left, right):
        if _is(other, 0.0):
            return 0.0
        if _is(other, 1.0):
            return self
        return -self if _is(other, -1.0) else self._op(left, "*", right)

    def __mul__(self, other):
        return self._times(other, self, other)

    def __rmul__(self, other):
        return self._times(other, other, self)

    def __truediv__(self, other):
        return self if _is(other, 1.0) else self._op(self, "/", other)

    def __rtruediv__(self, other):
        return 0.0 if _is(other, 0.0) else self._op(other, "/", self)

    def __pow__(self, other):
        return self._op(self, "**", other)

    def __neg__(self):
        if self._base() is not None:
            return self._base()
        out = self.rec.emit("neg", self.name)
        self.rec.negated[out.name] = self
        return out

    def __abs__(self):
        return self.rec.emit("abs", self.name)

    def __gt__(self, other) -> bool:
        # a condition of the algorithm (H_j > 0): checked at run time, the general path reports a failure
        self.rec.check(self.name, _code(other))
        return True


def _recording(rec: _Recorder) -> ScalarBackend:
    def call(fn: str):
        return lambda x: rec.emit(fn, x.name) if isinstance(x, _Var) else getattr(FLOAT, fn[1:])(x)

    return ScalarBackend("recording", call("_cos"), call("_sin"), call("_exp"), call("_sign"))


def _trace(build, counts: dict[str, int]):
    """Run ``build(backend, **inputs)`` on recording scalars: (recorder, inputs, outputs)."""
    rec = _Recorder()
    inputs = {key: rec.inputs(key, k) for key, k in counts.items()}
    return rec, inputs, build(_recording(rec), **inputs)


def generate(name: str, build, counts: dict[str, int]):
    """Trace ``build(backend, **inputs)`` (lists of recording scalars named by ``counts``) into a Python function.

    Returns the function, of the inputs' floats in the order of ``counts``, giving a tuple of floats.
    """
    rec, inputs, outputs = _trace(build, counts)
    args = ", ".join(v.name for vs in inputs.values() for v in vs)
    source = f"def {name}({args}):\n" + rec.body(outputs) + f"\n    return ({''.join(_code(o) + ', ' for o in outputs)})\n"
    namespace = {"_cos": math.cos, "_sin": math.sin, "_exp": math.exp, "_sign": FLOAT.sign, "_Fallback": Fallback}
    exec(compile(source, f"<robodyn kernel {name}>", "exec"), namespace)  # code generated above from the recursions
    return namespace[name]


def generate_c(name: str, build, counts: dict[str, int]) -> str:
    """The C99 source of the same kernel (:mod:`robodyn.dynamics.fast_c`): the operations of :func:`generate`'s
    function, in the same order, as C with a CPython entry ``single(*inputs, out)``."""
    rec, _, outputs = _trace(build, counts)
    return fast_c.source(rec.kept(outputs), counts, [_code(o) for o in outputs], name)


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
        if check and pivot_too_small(dk, lambda: scale):
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
