"""CasADi: a customized model written as one ``casadi.Function`` of symbolic (SX) inputs.

The emitter walks the same program as the text emitters (constants, the assignments in order, the outputs) and
builds each symengine expression as a CasADi SX expression instead of printing it, so the function holds the
customized model's operations (products by 0 and ±1 folded, constants off-line, shared subexpressions once).
"""

from __future__ import annotations

import numpy as np
import symengine as se

from robodyn.symbolic.codegen.printer import NonFiniteExpressionError, literal


def _functions(ca):
    return {"sin": ca.sin, "cos": ca.cos, "sign": ca.sign, "exp": ca.exp, "abs": ca.fabs}


def expression(e, env: dict, ca):
    """The SX of the symengine expression ``e``, its symbols read from ``env`` (name -> SX or float)."""
    if isinstance(e, se.Symbol):
        return env[str(e)]
    if isinstance(e, se.Number):
        return float(literal(e))  # refuses inf and NaN with the text emitters' error
    args = [expression(a, env, ca) for a in e.args]
    if isinstance(e, se.Add):
        out = args[0]
        for a in args[1:]:
            out = out + a
        return out
    if isinstance(e, se.Mul):
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if isinstance(e, se.Pow):
        base, power = args
        if isinstance(e.args[1], se.Integer) and int(e.args[1]) == -1:
            return 1 / base
        if isinstance(e.args[1], se.Integer) and 2 <= int(e.args[1]) <= 4:
            out = base
            for _ in range(int(e.args[1]) - 1):
                out = out * base
            return out
        return base ** power
    fn = _functions(ca).get(type(e).__name__.lower())
    if fn is None:
        raise NonFiniteExpressionError(f"no CasADi spelling of {type(e).__name__} in a generated expression")
    return fn(*args)


def function(model, name: str):
    """``casadi.Function(name, [arguments], [output])``: one SX input per argument of the model (its flat size,
    row-major), the output (rows, columns) of ``model.output_shape``."""
    import casadi as ca

    env = {str(s): float(v) for s, v in model.constants.items()}
    inputs = []
    for a in model.arguments:
        x = ca.SX.sym(a.name, int(np.prod(a.shape)))
        inputs.append(x)
        for k, s in a.entries:
            env[str(s)] = x[k]
    for s, e in model.program.assignments:
        env[str(s)] = expression(e, env, ca)
    values = [expression(o, env, ca) for o in model.outputs]
    rows, columns = (model.output_shape + (1,))[:2]
    out = ca.SX.zeros(rows, columns)
    for k, v in enumerate(values):
        out[k // columns, k % columns] = v
    return ca.Function(name, inputs, [out], [a.name for a in model.arguments], [model.kind])
