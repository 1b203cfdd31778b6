"""The program of a customized model: straight-line scalar assignments over symengine expressions (Khalil & Dombre
§9.6.2), which the listing and the code emitters read.

:func:`robodyn.symbolic.customize.assignments` writes a recording of robodyn's recursions into a :class:`Program`:
each value that holds an operation and is not written inside another becomes a variable (S2, WI12, W33, ...);
values without an operation (0, ±1, a symbol, minus a symbol) stay as they are.  Identical expressions (or
expressions equal to minus an existing one) share one variable (hash-consing on the canonical expression), and
:meth:`Program.pruned` removes the variables that do not reach the requested outputs.  Nothing here calls
``simplify``: the cost of building a model is linear in its size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import reduce
import operator

import symengine as se

from robodyn.dynamics.trace import tally

Expr = se.Basic


def is_atomic(e: Expr) -> bool:
    """True when ``e`` holds no operation: a number, a symbol or minus a symbol."""
    if isinstance(e, (se.Number, se.Symbol)):
        return True
    if isinstance(e, se.Mul):
        a = e.args
        return len(a) == 2 and a[0] == -1 and isinstance(a[1], se.Symbol)
    return False


def neg(e: Expr) -> Expr:
    """−e with the sign distributed over a sum, so that −(a − b) is stored as b − a."""
    if isinstance(e, se.Add):
        return reduce(operator.add, (neg(t) for t in e.args))
    return -e


def canonical(e: Expr) -> Expr:
    """Distribute a leading −1 (or any numeric factor ±1) over a sum: −(a + b) → −a − b."""
    if isinstance(e, se.Mul):
        a = e.args
        if len(a) == 2 and a[0] == -1 and isinstance(a[1], se.Add):
            return neg(a[1])
    return e


def number(value: float) -> Expr:
    """An exact integer when ``value`` is integral (so that 0 and ±1 fold), a double otherwise."""
    v = float(value)
    if v == int(v) and abs(v) < 2**52:
        return se.Integer(int(v))
    return se.RealDouble(v)


@dataclass
class Program:
    """A straight-line program: ordered assignments ``symbol = expression`` with hash-consing.

    Attributes
    ----------
    assignments : list of (Symbol, Expr)
        In evaluation order; every right-hand side uses inputs, constants and earlier symbols only.
    """

    assignments: list = field(default_factory=list)
    #: symbols whose value is fixed before the model runs (geometric/inertial constants, g)
    constant_symbols: set = field(default_factory=set)
    #: variables that depend on constants only: evaluated once, not per call, and not counted
    hoisted: set = field(default_factory=set)
    _by_expr: dict = field(default_factory=dict)
    _names: set = field(default_factory=set)

    def reserve(self, *names: str) -> None:
        """Mark names as taken (inputs, constants) so that no variable is created with them."""
        self._names.update(names)

    def _fresh(self, name: str) -> se.Symbol:
        base, k = name, 1
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return se.Symbol(name)

    def let(self, name: str, expr: Expr) -> Expr:
        """The variable holding ``expr`` (created as ``name`` if new), or ``expr`` itself when atomic."""
        expr = canonical(se.sympify(expr))
        if is_atomic(expr):
            return expr
        hit = self._by_expr.get(expr)
        if hit is not None:
            return hit
        hit = self._by_expr.get(canonical(neg(expr)))
        if hit is not None:
            return -hit
        sym = self._fresh(name)
        self.assignments.append((sym, expr))
        self._by_expr[expr] = sym
        free = expr.free_symbols
        if free and free <= self.constant_symbols:
            self.constant_symbols.add(sym)
            self.hoisted.add(sym)
        return sym

    def force(self, name: str, expr: Expr) -> se.Symbol:
        """Always assign ``expr`` to a new variable called ``name`` (model outputs such as GAM1)."""
        sym = self._fresh(name)
        self.assignments.append((sym, canonical(se.sympify(expr))))
        return sym

    def per_call(self):
        """The assignments evaluated at each call (those not depending on constants only)."""
        return [(s, e) for s, e in self.assignments if s not in self.hoisted]

    def pruned(self, outputs) -> "Program":
        """A copy without the assignments that do not reach ``outputs`` (backward scan, §9.6.2)."""
        needed = set()
        for e in outputs:
            needed |= se.sympify(e).free_symbols
        kept = []
        for sym, expr in reversed(self.assignments):
            if sym in needed:
                kept.append((sym, expr))
                needed |= expr.free_symbols
        p = Program()
        p.assignments = kept[::-1]
        p.constant_symbols = set(self.constant_symbols)
        p.hoisted = {s for s, _ in kept if s in self.hoisted}
        p._names = set(self._names)
        p._by_expr = {e: s for s, e in p.assignments}
        return p


# ---- operation counts ----------------------------------------------------------------------------------


def count_ops(e: Expr) -> dict:
    """Multiplications, additions and sin/cos (and other functions) needed to evaluate ``e`` as written.

    Divisions count as multiplications and subtractions as additions (Khalil & Dombre's convention, Tables 9.5
    and 9.6); a sign change is free.  ``x**k`` costs k − 1 multiplications.  The operations are those of the
    tracer's IR, counted by robodyn's one counter (:func:`robodyn.dynamics.trace.tally`).
    """
    ops: list[str] = []
    _ops(e, ops)
    c = tally(ops)
    return {"mul": c["mul"], "add": c["add"], "sincos": c["sin"] + c["cos"], "other": c["other"] + c["sqrt"]}


def _ops(e: Expr, ops: list, in_mul: bool = False) -> None:
    """Append the IR operations of evaluating ``e`` to ``ops``."""
    if isinstance(e, (se.Number, se.Symbol, type(se.E))):
        return
    if isinstance(e, se.Add):
        ops += ["add"] * (len(e.args) - 1)
        for a in e.args:
            _ops(a, ops)
        return
    if isinstance(e, se.Mul):
        coeff, factors = 1, []
        for a in e.args:
            if isinstance(a, se.Number):
                coeff = a
            else:
                factors.append(a)
        ops += ["mul"] * (len(factors) - 1) + ["cmul"] * (coeff not in (1, -1))
        if factors and all(_is_inverse(f) for f in factors):
            ops.append("rdiv")
        for f in factors:
            _ops(f, ops, in_mul=True)
        return
    if isinstance(e, se.Pow):
        base, ex = e.args
        _ops(base, ops)
        if isinstance(ex, se.Integer):
            k = abs(int(ex))
            # inside a product a division replaces one of the product's multiplications
            ops += ["mul"] * (k - 1) + ["rdiv"] * (int(ex) < 0 and not in_mul)
        else:
            ops.append("pow")
            _ops(ex, ops)
        return
    if isinstance(e, (se.sin, se.cos)):
        ops.append("sin" if isinstance(e, se.sin) else "cos")
    else:
        ops.append("fn")
    for a in e.args:
        _ops(a, ops)


def _is_inverse(f: Expr) -> bool:
    return isinstance(f, se.Pow) and isinstance(f.args[1], se.Integer) and int(f.args[1]) < 0


def total_ops(exprs) -> dict:
    """Sum of :func:`count_ops` over expressions."""
    out = {"mul": 0, "add": 0, "sincos": 0, "other": 0}
    for e in exprs:
        for k, v in count_ops(e).items():
            out[k] += v
    return out
