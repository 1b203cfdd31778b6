"""Printing symengine expressions as source text for Python/NumPy, C99, MATLAB and Julia.

One small recursive printer (no sympy printers: they are slow on large programs) parameterised by the
target language's spelling of functions, powers and numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import symengine as se

from robodyn.errors import ModelError


@dataclass(frozen=True)
class Language:
    name: str
    functions: dict  # symengine function name -> target spelling
    power: str  # "**", "^" or "pow"


PYTHON = Language("python", {"sin": "np.sin", "cos": "np.cos", "sign": "np.sign", "exp": "np.exp", "abs": "np.abs"}, "**")
C = Language("c", {"sin": "rd_sin", "cos": "rd_cos", "sign": "rd_sign", "exp": "exp", "abs": "fabs"}, "pow")
MATLAB = Language("matlab", {"sin": "sin", "cos": "cos", "sign": "sign", "exp": "exp", "abs": "abs"}, "^")
JULIA = Language("julia", {"sin": "sin", "cos": "cos", "sign": "sign", "exp": "exp", "abs": "abs"}, "^")

_PREC_ADD, _PREC_MUL, _PREC_POW, _PREC_ATOM = 1, 2, 3, 4


class NonFiniteExpressionError(ModelError):
    """A generated expression holds inf or NaN (a division by an exact zero, e.g. a singular inertia matrix)."""


def _check_finite(x) -> None:
    if type(x).__name__ in ("ComplexInfinity", "NaN", "Infinity", "NegativeInfinity"):
        raise NonFiniteExpressionError(
            f"a generated expression divides by an exact zero ({x})")


def literal(value) -> str:
    """The shortest decimal text of the float ``value`` that reads back as the same double, in every target
    language (C, Python, MATLAB, Julia). inf and NaN have no literal in C (``inf`` is an undeclared name in C
    and in generated Python): raise :class:`NonFiniteExpressionError` rather than write a file that does not
    compile or a function that raises NameError."""
    try:
        v = float(value)
    except OverflowError:  # an exact integer or rational beyond the doubles
        v = math.inf
    if not math.isfinite(v):
        raise NonFiniteExpressionError(f"a generated constant is {v} (a model value overflowed, e.g. the inverse "
                                       "of a subnormal mass); give the model values of physical size")
    return repr(v)


def _number(x, lang: Language) -> str:
    if isinstance(x, se.Integer):
        v = int(x)
        if abs(v) >= 2**53:  # beyond exact doubles: the target's parser would round it anyway (or overflow)
            return literal(v)
        return f"{v}.0" if lang.name == "c" else str(v)
    if isinstance(x, se.Rational):
        p, q = (int(a) for a in x.get_num_den())
        if max(abs(p), abs(q)) >= 2**53:
            return literal(p / q)
        return f"({p}.0/{q}.0)"
    return literal(x)


def to_source(e, lang: Language) -> str:
    """Source text of expression ``e`` in ``lang``."""
    return _print(e, lang)[0]


def _print(e, lang):
    if isinstance(e, se.Symbol):
        return str(e), _PREC_ATOM
    if isinstance(e, se.Number):
        _check_finite(e)
        s = _number(e, lang)
        return s, (_PREC_ADD if s.startswith("-") else _PREC_ATOM)
    if isinstance(e, se.Add):
        terms = list(e.args)
        # numbers last, then positive terms first so that the line does not start with a minus sign
        terms.sort(key=lambda t: (isinstance(t, se.Number), _negative(t)))
        out = ""
        for t in terms:
            if _negative(t):
                s, p = _print(-t, lang)
                out += (" - " if out else "-") + (s if p > _PREC_ADD else f"({s})")
            else:
                s, _ = _print(t, lang)
                out += (" + " if out else "") + s
        return out, _PREC_ADD
    if isinstance(e, se.Mul):
        coeff, num, den = 1, [], []
        for a in e.args:
            if isinstance(a, se.Number):
                coeff = a
            elif isinstance(a, se.Pow) and isinstance(a.args[1], se.Integer) and int(a.args[1]) < 0:
                den.append(a.args[0] ** (-int(a.args[1])))
            else:
                num.append(a)
        parts = [_wrap(a, lang, _PREC_MUL) for a in num]
        if coeff == -1:
            sign = "-"
        else:
            sign = ""
            if coeff != 1:
                parts.insert(0, _wrap(coeff, lang, _PREC_MUL))
        s = "*".join(parts) if parts else "1"
        for d in den:
            s += "/" + _wrap(d, lang, _PREC_MUL + 1)
        return sign + s, (_PREC_ADD if sign else _PREC_MUL)
    if isinstance(e, se.Pow):
        b, x = e.args
        if b == se.E:
            return f"{lang.functions['exp']}({to_source(x, lang)})", _PREC_ATOM
        if isinstance(x, se.Integer) and int(x) < 0:
            return f"1/{_wrap(b ** (-int(x)), lang, _PREC_MUL + 1)}", _PREC_MUL
        if lang.power == "pow":
            if isinstance(x, se.Integer) and 2 <= int(x) <= 4:
                bs = _wrap(b, lang, _PREC_MUL + 1)
                return "(" + "*".join([bs] * int(x)) + ")", _PREC_ATOM
            return f"pow({to_source(b, lang)}, {to_source(x, lang)})", _PREC_ATOM
        return f"{_wrap(b, lang, _PREC_POW + 1)}{lang.power}{_wrap(x, lang, _PREC_POW + 1)}", _PREC_POW
    name = type(e).__name__.lower()
    if name in lang.functions:
        return f"{lang.functions[name]}({', '.join(to_source(a, lang) for a in e.args)})", _PREC_ATOM
    raise NotImplementedError(f"cannot print {e!r} ({type(e).__name__}) for {lang.name}")


def _negative(t) -> bool:
    if isinstance(t, se.Number):
        _check_finite(t)
        return float(t) < 0
    if isinstance(t, se.Mul):
        c = t.args[0]
        if isinstance(c, se.Number):
            _check_finite(c)
            return float(c) < 0
        return False
    return False


def _wrap(e, lang, prec):
    s, p = _print(e, lang)
    return s if p >= prec else f"({s})"


def used_symbols(model) -> set:
    """Names of the symbols the model's assignments, outputs and checks read: an input entry outside this set
    is not unpacked (an unused variable fails ``-Wall -Wextra -Werror``)."""
    used = set()
    for e in [e for _, e in model.program.assignments] + list(model.outputs) \
            + [x for _, p, sc in getattr(model, "checks", ()) for x in (p, sc)]:
        used |= {str(x) for x in se.sympify(e).free_symbols}
    return used


def statements(model, lang: Language, argument, output, constant="{s} = {v}", assignment="{s} = {e}",
               check=None) -> list:
    """The body of a generated function, indented by 4: constants, arguments unpacked into the input
    symbols (those used), the assignments in order, the pivot checks, then the outputs.

    ``argument(array_name, flat_index, symbol)``, ``output(flat_index, text)`` and ``check(index, pivot text,
    scale text)`` spell one line (no ``check``: no check lines); ``constant`` and ``assignment`` are format
    strings with fields ``s``, ``v`` (the value's :func:`literal`) / ``s``, ``e``.
    """
    used = used_symbols(model)
    lines = [constant.format(s=s, v=literal(v)) for s, v in sorted(model.constants.items(), key=lambda kv: str(kv[0]))]
    lines += [argument(a.name, k, s) for a in model.arguments for k, s in a.entries if str(s) in used]
    lines += [assignment.format(s=s, e=to_source(e, lang)) for s, e in model.program.assignments]
    if check is not None:
        lines += [check(k, to_source(p, lang), to_source(sc, lang)) for k, (_, p, sc) in enumerate(model.checks)]
    lines += [output(k, to_source(o, lang)) for k, o in enumerate(model.outputs)]
    return ["    " + line for line in lines]


@dataclass(frozen=True)
class Argument:
    """One array argument of a generated function: ``name`` of shape (..., *shape); ``entries`` maps
    flat indices (row-major) to the program's input symbols (missing entries are not used)."""

    name: str
    shape: tuple
    entries: tuple  # ((flat index, Symbol), ...)
