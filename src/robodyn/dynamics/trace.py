"""The tracer: recording scalars that write one straight-line program (the IR) for every reader.

The IR
------
A :class:`Tape` is a list of assignments ``t_k = op(args)``, ``k = 0, 1, …``, each made once (equal right-hand
sides share one ``k``, hash-consing), with the value ``vals[k]`` it had at the state it was traced with and the
``phases[k]`` (named recursion) that made it.  ``ops[k]`` is a tuple ``(op, *args)``; an ``int`` argument is an
earlier assignment ``t_j``, a ``float`` a constant of the robot (done off-line), ``sign`` ±1:

=========================  =================================  =========================
``("in", name)``           an input scalar (``q0``, ``qd3``)   free
``("mul", j, k)``          t_j · t_k  (j ≤ k)                   mul
``("cmul", c, k)``         c · t_k  (c > 0)                     mul
``("div", j, k)``          t_j / t_k                            mul (and div)
``("rdiv", k)``            1 / t_k                              mul (and div)
``("divc", k, c)``         t_k / c  (counting tapes)            mul (and div)
``("cdiv", c, k)``         c / t_k  (counting tapes)            mul (and div)
``("add", j, sign, k)``    t_j + sign · t_k  (j ≤ k)            add
``("addc", c, k)``         t_k + c                              add
``("let", k, sign)``       sign · t_k as a variable of its own  free
``(fn, k)``                fn(t_k), fn ∈ sin cos sqrt exp       sin / cos / sqrt / other
``("pow", k, p)``          t_k ** p (p a constant)              other
``("abs", k)``             |t_k|, ``("sign", k)`` sign(t_k)     free
``("fn", name, k)``        another function (symbolic counts)   other
=========================  =================================  =========================

An output is ``sign · t_k`` (a :class:`Rec`) or a constant.  The readers: :meth:`Recorded.evaluate` (NumPy,
any batch), :meth:`Recorded.count` / :meth:`Recorded.count_by_phase` (the one operation counter, :func:`tally`,
over the assignments that reach the outputs), the customized models of :mod:`robodyn.symbolic.formulations`.

The constants: :data:`SNAP_TOL` is robodyn's one tolerance for taking a constant of the robot as exactly 0 or ±1
(:func:`snap`); the counting scalars of :mod:`robodyn.analysis.traced` use it too.

The recording scalar
--------------------
Khalil & Dombre's customizing method (§9.6.2), applied to the *same* component recursions that robodyn runs on
floats, run once on :class:`Rec` scalars (docs/symbolic.md, "How the engine works").  A :class:`Rec` is a node of
a :class:`Tape` times a sign; arithmetic on it creates nodes with these rules:

* a robot constant is a Python float: an operation between constants is done at once (off-line, not counted);
* x·0 = 0, x·(±1) = ±x, x + 0 = x; negation is free (the sign travels with the value);
* c₁(c₂ x) = (c₁c₂) x, (c₁ x)(c₂ y) = (c₁c₂)(x y) and c₁ x + c₂ x = (c₁ + c₂) x: constant coefficients merge
  (their products and sums are constants of the robot);
* x − x = 0, x / x = 1, and x + y, y + x, −(y − x) are one node (commutative, sign-normalised keys): every
  repeated expression is one node (hash-consing); constants within :data:`SNAP_TOL` of 0 or ±1 are 0 or ±1;
* only the nodes that reach the outputs are counted (the backward scan of §9.6.2).

The count is robodyn's one definition (docs/symbolic.md, "Operation counts").  Each node records its value at the
traced state, so comparisons in the recursions (pivot tests) take their branch there.
"""

from __future__ import annotations

from types import MappingProxyType
import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np

from robodyn.spatial import ScalarBackend

#: The cost kind of each operation of the IR ("mul", "add", "sin", "cos", "sqrt", "other" or None: free),
#: the one table of robodyn's operation counts.
COST = MappingProxyType({"in": None, "mul": "mul", "cmul": "mul", "div": "mul", "rdiv": "mul", "add": "add",
                         "addc": "add", "divc": "mul", "cdiv": "mul", "let": None, "sin": "sin", "cos": "cos", "sqrt": "sqrt", "exp": "other",
                         "pow": "other", "fn": "other", "abs": None, "sign": None})

#: The counted kinds, in the order of a count: ``mul`` includes the divisions, ``div`` counts them alone.
KINDS = ("mul", "add", "sin", "cos", "sqrt", "other", "div")

#: Constants within this of 0 or ±1 are exactly 0 or ±1: structural zeros and ones that the off-line constant
#: arithmetic leaves inexact by round-off (cos²α + sin²α − 1 when coefficients merge, the articulated inertia
#: K_j a_j = 0 of the last link).  Without it a count would depend on the random values of a counting robot.
SNAP_TOL = 1e-12


def _binary(fn, swap: bool = False):
    """The method ``fn(self, o)`` (``fn(o, self)`` with ``swap``) of :class:`Const`."""
    def method(self, o):
        return self._with(o, fn, swap)

    return method


class Const(float):
    """A constant of the robot that a customized model keeps by name: its value (the float) and ``expr``, an
    expression of named constants (D3, XX2, ...) built by the symbolic layer, whose objects support + − × ÷.

    Arithmetic between constants gives constants with both the value and the expression (the recursions run
    unchanged on them); a result whose expression is a plain number is a plain float.  A :class:`Rec` keeps
    a :class:`Const` coefficient as it is (never snapped to 0 or ±1: a symbol stays a symbol), so that the
    customized models of :mod:`robodyn.symbolic.models` can write it back by name.
    """

    __slots__ = ("expr",)

    def __new__(cls, value: float, expr):
        out = float.__new__(cls, value)
        out.expr = expr
        return out

    def _with(self, o, fn, swap: bool = False):
        if not isinstance(o, (float, int)) or isinstance(o, bool):
            return NotImplemented
        a, b = (o, self) if swap else (self, o)
        return constant(fn(float(a), float(b)), fn(expression(a), expression(b)))

    __add__, __radd__ = _binary(operator.add), _binary(operator.add, True)
    __sub__, __rsub__ = _binary(operator.sub), _binary(operator.sub, True)
    __mul__, __rmul__ = _binary(operator.mul), _binary(operator.mul, True)
    __truediv__, __rtruediv__ = _binary(operator.truediv), _binary(operator.truediv, True)

    def __neg__(self):
        return Const(-float(self), -self.expr)

    def __abs__(self):
        return self if float(self) >= 0 else -self

    def __pos__(self):
        return self

    def __repr__(self) -> str:
        return f"Const({float(self)!r}, {self.expr!r})"


def expression(x):
    """The expression of a constant: ``expr`` of a :class:`Const`, else the number (an int when integral)."""
    if isinstance(x, Const):
        return x.expr
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**52 else x


def constant(value: float, expr):
    """``Const(value, expr)``, or the plain float when ``expr`` is a number (no named constant left in it)."""
    if isinstance(expr, (int, float)) or getattr(expr, "is_Number", False):
        return float(value)
    return Const(value, expr)


def _number(c):
    """A constant operand of the IR: a :class:`Const` as it is, anything else as a float."""
    return c if isinstance(c, Const) else float(c)


def snap(c: float) -> float:
    """``c`` as a float, exactly 0 or ±1 when within :data:`SNAP_TOL` of them (a :class:`Const` as it is)."""
    if isinstance(c, Const):
        return c
    c = float(c)
    if abs(c) < SNAP_TOL:
        return 0.0
    if abs(abs(c) - 1.0) < SNAP_TOL:
        return 1.0 if c > 0 else -1.0
    return c


def tally(ops) -> dict:
    """The operation count of the IR operations ``ops`` (the ``op`` names of the assignments counted):
    {"mul", "add", "sin", "cos", "sqrt", "other", "div"}, :data:`COST`'s kinds plus ``div`` for the divisions."""
    out = dict.fromkeys(KINDS, 0)
    for op in ops:
        kind = COST[op]
        if kind is not None:
            out[kind] += 1
            out["div"] += op in ("div", "rdiv", "divc", "cdiv")
    return out


class Tape:
    """The IR of one recording (see the module docstring): ``ops[k]`` = (operation, arguments), ``vals[k]`` its
    value at the traced state.

    ``counting=True``: the rules of an operation count of generic code as it runs (the counting scalars of
    :mod:`robodyn.analysis.traced`): every executed operation is a node of its own (no sharing, no merged
    coefficients, no x − x = 0), constants within :data:`SNAP_TOL` of 0 and ±1 fold, a division by a constant
    stays a division, comparisons take the traced values, and ``listener(op)`` (if given) hears each new node.
    """

    def __init__(self, counting: bool = False, listener=None) -> None:
        self.counting = counting
        #: the symbolic rules (merged coefficients, x − x = 0, x / x = 1, commutative keys) apply
        self.simplify = not counting
        self.listener = listener
        self.ops: list[tuple] = []
        self.vals: list[float] = []
        self._index: dict[tuple, int] = {}
        self.inputs: dict[str, list[int]] = {}
        self.phases: list[str] = []  # the phase in which each node was first made
        self.phase = ""
        #: a list to collect the pivot tests the recursion makes, as (pivot, scale, label), or None
        #: (:mod:`robodyn.symbolic.customize`: the checks of a customized model)
        self.checks: list | None = None
        #: node → (name, sign) given by :func:`robodyn.spatial.label`: the variable ``name`` of a customized model's
        #: listing holds sign × the node; or None
        self.labels: dict | None = None

    def set_phase(self, name: str) -> None:
        """Attribute the nodes made from now on to ``name`` (a row of a published per-recursion table)."""
        self.phase = name

    def node(self, op: tuple, value: float) -> int:
        if self.counting:
            self.ops.append(op)
            self.vals.append(value)
            self.phases.append(self.phase)
            if self.listener is not None:
                self.listener(op)
            return len(self.ops) - 1
        # A constant in a key is rounded to 12 significant digits: equal constants of the robot reached by
        # different off-line arithmetic (a b c as (a b) c or a (b c)) differ in their last bits, and must still
        # share one node (else a count would depend on the rounding of random values).
        key = tuple(_key(x) for x in op)
        k = self._index.get(key)
        if k is None:
            k = self._index[key] = len(self.ops)
            self.ops.append(op)
            self.vals.append(float(value))
            self.phases.append(self.phase)
        return k

    def input(self, name: str, values) -> list["Rec"]:
        """Input scalars ``name[0..]`` with the given trace values."""
        ids = [self.node(("in", f"{name}{k}"), float(v)) for k, v in enumerate(values)]
        self.inputs[name] = ids
        return [Rec(self, k, 1) for k in ids]


def _key(x):
    """A node key's operand: a float to 12 significant digits, a :class:`Const` by its expression."""
    if type(x) is float:
        return float(f"{x:.12g}")
    return ("const", x.expr) if isinstance(x, Const) else x


def _equals(c, value: float) -> bool:
    """``c`` is the number ``value`` (a :class:`Const` never is: its expression stays in the model)."""
    return not isinstance(c, Const) and c == value


def _const(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Rec)


class Rec:
    """sign × node ``k`` of ``graph``: a recording scalar (see the module docstring for the rules)."""

    __slots__ = ("g", "k", "s")
    #: accepted inside object arrays by robodyn's argument checks (robodyn.arrays.as_real_array): on a counting
    #: tape the batched NumPy code runs on it
    counting_scalar = True

    def __init__(self, g: Tape, k: int, s: int) -> None:
        self.g, self.k, self.s = g, k, s

    # --- helpers ---------------------------------------------------------------------------------------------
    @property
    def v(self) -> float:
        return self.s * self.g.vals[self.k]

    def _op(self):
        return self.g.ops[self.k]

    @property
    def records_checks(self) -> bool:
        """A comparison is noted as a check of the generated code (a tape that collects its checks;
        :func:`robodyn.arrays.pivot_too_small`)."""
        return self.g.checks is not None

    def _coef(self):
        """(c, node) with this value = c · node (c a constant, 1 unless the node is a constant multiple; always
        ±1 on a counting tape, whose coefficients never merge)."""
        op = self._op()
        if op[0] == "cmul" and self.g.simplify:
            return self.s * op[1], op[2]
        return float(self.s), self.k

    def _make(self, coef: float, k: int):
        """coef · node k as a Rec (or a constant for coef = 0)."""
        coef = snap(coef)
        if _equals(coef, 0.0):
            return 0.0
        if _equals(abs(coef), 1.0):
            return Rec(self.g, k, 1 if coef > 0 else -1)
        sign = -1 if coef < 0 else 1  # a named constant of value 0 is positive: its expression as it is
        c = abs(_number(coef))
        return Rec(self.g, self.g.node(("cmul", c, k), c * self.g.vals[k]), sign)

    # --- arithmetic ------------------------------------------------------------------------------------------
    def __neg__(self):
        return Rec(self.g, self.k, -self.s)

    def __pos__(self):
        return self

    def __add__(self, o):
        if _const(o):
            if _equals(snap(o), 0.0):
                return self
            # (s x) + c = s (x + s c)
            c = _number(o) * self.s
            return Rec(self.g, self.g.node(("addc", c, self.k), self.g.vals[self.k] + c), self.s)
        if not isinstance(o, Rec):
            return NotImplemented
        ca, a = self._coef()
        cb, b = o._coef()
        if a == b and self.g.simplify:  # c₁ x + c₂ x = (c₁ + c₂) x
            return self._make(ca + cb, a)
        pair = ((self.s, self.k), (o.s, o.k))
        (s1, x), (s2, y) = sorted(pair, key=lambda t: t[1]) if self.g.simplify else pair
        # s1 x + s2 y = s1 (x + s1 s2 y)
        rel = s1 * s2
        k = self.g.node(("add", x, rel, y), self.g.vals[x] + rel * self.g.vals[y])
        return Rec(self.g, k, s1)

    __radd__ = __add__

    def __sub__(self, o):
        return self + (-o)

    def __rsub__(self, o):
        return (-self) + o

    def __mul__(self, o):
        if _const(o):
            if _equals(snap(o), 1.0):
                return self
            ca, a = self._coef()
            return self._make(ca * _number(o), a)
        if not isinstance(o, Rec):
            return NotImplemented
        ca, a = self._coef()
        cb, b = o._coef()
        x, y = sorted((a, b)) if self.g.simplify else (a, b)
        k = self.g.node(("mul", x, y), self.g.vals[x] * self.g.vals[y])
        return Rec(self.g, k, 1)._make_scaled(ca * cb)

    __rmul__ = __mul__

    def _make_scaled(self, coef: float):
        return self._make(coef, self.k) if self.s == 1 else self._make(-coef, self.k)

    def __truediv__(self, o):
        if _const(o):
            if self.g.simplify:
                return self * (1.0 / _number(o))
            if _equals(abs(snap(o)), 1.0):
                return self * snap(o)
            return Rec(self.g, self.g.node(("divc", self.k, float(o)), self.g.vals[self.k] / float(o)), self.s)
        if not isinstance(o, Rec):
            return NotImplemented
        ca, a = self._coef()
        cb, b = o._coef()
        if a == b and self.g.simplify:  # (c₁ x) / (c₂ x) = c₁ / c₂
            return snap(ca / cb)
        k = self.g.node(("div", a, b), self.g.vals[a] / self.g.vals[b])
        return Rec(self.g, k, 1)._make_scaled(ca / cb)

    def __rtruediv__(self, o):
        if not _const(o):
            return NotImplemented
        if _equals(snap(o), 0.0):
            return 0.0
        if not self.g.simplify:  # c / (s x) = s (c / x)
            return Rec(self.g, self.g.node(("cdiv", float(o), self.k), float(o) / self.g.vals[self.k]), self.s)
        cb, b = self._coef()
        k = self.g.node(("rdiv", b), 1.0 / self.g.vals[b])
        return Rec(self.g, k, 1)._make_scaled(_number(o) / cb)

    def __pow__(self, p):
        if not _const(p):
            raise TypeError(f"Rec ** {p!r}: only constant exponents are recorded")
        if _equals(p, 2.0):
            return self * self
        if _equals(p, 1.0):
            return self
        x = opaque(self) if self.s == -1 else self  # the power of −x is a value of its own
        return Rec(self.g, self.g.node(("pow", x.k, _number(p)), x.g.vals[x.k] ** float(p)), 1)

    def _fn(self, name: str, fn):
        return Rec(self.g, self.g.node((name, self.k), fn(self.g.vals[self.k])), 1)

    def __abs__(self):
        return self._fn("abs", abs)

    def name_as(self, name: str) -> None:
        """Name this value ``name`` on a recording that keeps names (:func:`robodyn.spatial.label`): its node
        becomes the variable ``name`` holding this value, sign included; a node keeps the first name it is given."""
        if self.g.labels is not None:
            self.g.labels.setdefault(self.k, (name, self.s))

    def __float__(self) -> float:
        return self.v

    def __repr__(self) -> str:
        return f"Rec({'-' if self.s < 0 else ''}t{self.k} = {self.v!r})"

    # --- NumPy's ufuncs call these methods of the elements of object arrays -----------------------------------
    def sin(self):
        return _SIN(self)

    def cos(self):
        return _COS(self)

    def sqrt(self):
        return _SQRT(self)

    def exp(self):
        return _EXP(self)

    # --- equality: of values on a counting tape (generic code may test x == 0); identity elsewhere -------------
    def __eq__(self, o):
        if not self.g.counting:
            return NotImplemented
        return self.v == (o.v if isinstance(o, Rec) else o)

    def __ne__(self, o):
        if not self.g.counting:
            return NotImplemented
        return self.v != (o.v if isinstance(o, Rec) else o)

    # --- comparisons use the traced value (the branch a recursion takes at that state) ------------------------
    def __gt__(self, o):
        return self.v > float(o)

    def exceeds(self, factor: float, scale, label=None) -> bool:
        """x > factor · scale, the relative pivot test of :func:`robodyn.arrays.pivot_too_small`: on a tape that
        collects its checks, noted as (x, scale, label) (``label``: whose pivot it is) and decided by the traced
        values; else decided by them."""
        if self.g.checks is not None:
            self.g.checks.append((self, scale, label))
            return self.v > factor * float(scale)
        return self > factor * scale

    def __ge__(self, o):
        return self.v >= float(o)

    def __lt__(self, o):
        return self.v < float(o)

    def __le__(self, o):
        return self.v <= float(o)

    __hash__ = None


def no_phase(name: str) -> None:
    """The default ``phase`` callback of the counted recursions: the name of a recursion, ignored outside a
    recording (:mod:`robodyn.analysis.opcount` passes one that attributes operations to a row of a paper's table)."""
    return None


def opaque(x):
    """``x`` as a variable of its own (SYMORO's named intermediate, e.g. S2 = 2 S C): later products use it as it
    is instead of merging its constant factor into theirs.  Free; a float passes unchanged."""
    if not isinstance(x, Rec):
        return x
    return Rec(x.g, x.g.node(("let", x.k, x.s), x.v), 1)


def _unary(name: str, fn, parity: int):
    """The backend function ``name``: ``fn`` of a float; on a Rec a node (cos even, sin and sign odd: the sign of
    the argument travels; any other function of −x takes −x as a value of its own)."""
    def f(x):
        if not isinstance(x, Rec):
            return fn(x)
        if x.s == -1 and parity == 0:
            x = opaque(x)
        r = Rec(x.g, x.g.node((name, x.k), fn(x.g.vals[x.k])), 1)
        return -r if (x.s == -1 and parity == -1) else r

    return f


_SIN, _COS, _SQRT, _EXP = (_unary("sin", math.sin, -1), _unary("cos", math.cos, 1), _unary("sqrt", math.sqrt, 0),
                           _unary("exp", math.exp, 0))


def recording_backend() -> ScalarBackend:
    """A :class:`ScalarBackend` whose functions record on :class:`Rec` scalars (floats pass to ``math``)."""
    return ScalarBackend("recording-symbolic", _COS, _SIN, _EXP, _unary("sign", lambda v: float(np.sign(v)), -1))


#: How :meth:`Recorded.evaluate` computes an IR operation from the values ``v`` of the nodes (any other operation
#: ``(fn, k)`` is NumPy's ``fn``).
_EVALUATE = MappingProxyType({
    "mul": lambda v, op: v[op[1]] * v[op[2]], "cmul": lambda v, op: op[1] * v[op[2]],
    "add": lambda v, op: v[op[1]] + op[2] * v[op[3]], "addc": lambda v, op: v[op[2]] + op[1],
    "div": lambda v, op: v[op[1]] / v[op[2]], "let": lambda v, op: op[2] * v[op[1]],
    "rdiv": lambda v, op: 1.0 / v[op[1]], "pow": lambda v, op: v[op[1]] ** op[2],
})


@dataclass
class Recorded:
    """A recorded straight-line program: the graph, the output scalars and what is counted.

    Attributes
    ----------
    graph : Tape
    outputs : list of Rec or float — the outputs, row-major.
    """

    graph: Tape
    outputs: list

    def reachable(self) -> list[int]:
        """Nodes the outputs need, in evaluation order (backward scan, Khalil & Dombre §9.6.2)."""
        return needed(self.graph, [o.k for o in self.outputs if isinstance(o, Rec)])

    def count(self) -> dict:
        """{"mul", "add", "sin", "cos", "sqrt", "other", "div"}: operations of the nodes that reach the outputs
        (``mul`` includes the divisions, ``div`` counts them alone)."""
        return tally(self.graph.ops[k][0] for k in self.reachable())

    def count_by_phase(self) -> dict:
        """{phase: count dict} over the nodes that reach the outputs (a node counts in the phase that made it)."""
        by_phase: dict = {}
        for k in self.reachable():
            by_phase.setdefault(self.graph.phases[k], []).append(k)
        return {name: tally(self.graph.ops[k][0] for k in ks) for name, ks in by_phase.items()}

    def evaluate(self, **inputs) -> np.ndarray:
        """The outputs at other input values: each input name maps to an array (..., size) (broadcast); returns
        (..., n_outputs)."""
        vals: dict[int, np.ndarray] = {}
        for name, ids in self.graph.inputs.items():
            a = np.asarray(inputs[name], dtype=float)
            for j, k in enumerate(ids):
                vals[k] = a[..., j]
        for k in self.reachable():
            op = self.graph.ops[k]
            if op[0] != "in":
                rule = _EVALUATE.get(op[0])
                vals[k] = rule(vals, op) if rule else getattr(np, op[0])(vals[op[1]])
        shape = np.broadcast_shapes(*(np.shape(np.asarray(v))[:-1] for v in inputs.values()))
        cols = [np.broadcast_to(o.s * vals[o.k] if isinstance(o, Rec) else float(o), shape) for o in self.outputs]
        return np.stack(cols, axis=-1)


def arguments(op: tuple) -> list[int]:
    """The nodes an IR operation ``op`` reads."""
    kind = op[0]
    if kind == "in":
        return []
    if kind == "mul" or kind == "div":
        return [op[1], op[2]]
    if kind == "cmul" or kind == "addc" or kind == "cdiv":
        return [op[2]]
    if kind == "add":
        return [op[1], op[3]]
    return [op[1]]


def needed(tape: Tape, roots) -> list[int]:
    """The nodes that the nodes ``roots`` need, themselves included, in tape (evaluation) order: the backward
    scan of Khalil & Dombre §9.6.2."""
    need = set()
    stack = list(roots)
    while stack:
        k = stack.pop()
        if k in need:
            continue
        need.add(k)
        stack.extend(arguments(tape.ops[k]))
    return sorted(need)


def record(build, sizes: dict, seed: int = 0) -> Recorded:
    """Run ``build(backend, phase, **inputs)`` once on :class:`Rec` inputs (``sizes``: name → count, traced at
    random values from ``seed``; ``phase(name)`` attributes what follows to a named recursion) and return the
    :class:`Recorded` program of its outputs."""
    g = Tape()
    rng = np.random.default_rng(seed)
    inputs = {name: g.input(name, rng.uniform(-1.5, 1.5, size)) for name, size in sizes.items()}
    outputs = build(recording_backend(), g.set_phase, **inputs)
    return Recorded(g, [o if isinstance(o, Rec) else float(o) for o in outputs])
