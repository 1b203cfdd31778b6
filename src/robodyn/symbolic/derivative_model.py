"""Derivatives as code: the forward-mode derivative of a customized model's straight-line program (Khalil & Dombre
§9.6; docs/derivatives.md, "Derivatives as code"): each assignment t = e(a, b, …) gets ṫ_d = Σ_a ∂e/∂a · ȧ_d per
input direction d that reaches it, a :class:`CustomizedModel` that every emitter writes unchanged. The derivative
of sign(q̇) (the Coulomb step) is taken as 0, as :func:`robodyn.inverse_dynamics_derivatives` leaves out its Dirac.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import symengine as se

from robodyn.dynamics import derivatives
from robodyn.symbolic.codegen.c_code import parameter_names, with_parameter_input
from robodyn.symbolic.engine import Program
from robodyn.symbolic.models import CustomizedModel, customized_model

#: derivative kind -> (model kind, arguments differentiated, names of the result's parts)
DERIVATIVE_KINDS = MappingProxyType({
    "inverse_dynamics_derivatives": ("inverse_dynamics", ("q", "qd"), ("dtau_dq", "dtau_dqd")),
    "forward_dynamics_derivatives": ("forward_dynamics", ("q", "qd", "tau"), ("dqdd_dq", "dqdd_dqd", "dqdd_dtau")),
})


def derivative_record(kind: str, out, n: int):
    """The numeric function's record (:class:`robodyn.dynamics.derivatives.InverseDynamicsDerivatives` or
    ``ForwardDynamicsDerivatives``) of the derivative ``kind`` from its stacked (..., k·n, n) array ``out``: views
    of its (n, n) row blocks ∂/∂q, ∂/∂q̇ (, ∂/∂Γ)."""
    record = {"inverse_dynamics_derivatives": derivatives.InverseDynamicsDerivatives,
              "forward_dynamics_derivatives": derivatives.ForwardDynamicsDerivatives}[kind]
    return record(*(out[..., k:k + n, :] for k in range(0, out.shape[-2], n)))


def _without_step_derivatives(e):
    """``e`` with every unevaluated Derivative (of sign(x): the Dirac of the step) replaced by 0."""
    found = e.atoms(se.Derivative)
    return e.subs({d: 0 for d in found}) if found else e


def differentiated(model: CustomizedModel, wrt: tuple, kind: str) -> CustomizedModel:
    """The model of the derivatives of ``model``'s outputs (m of them) with respect to its arguments ``wrt``
    (each (n,)): outputs row-major of shape (len(wrt)·m, n), block p the derivative along argument wrt[p],
    [p·m + i, k] = ∂out_i/∂wrt[p]_k."""
    by_name = {a.name: a for a in model.arguments}
    n = by_name[wrt[0]].shape[0]
    tangent: dict = {}
    for p, name in enumerate(wrt):
        for k, sym in by_name[name].entries:
            tangent[sym] = {p * n + k: se.Integer(1)}
    program = Program(assignments=list(model.program.assignments),
                      constant_symbols=set(model.program.constant_symbols), hoisted=set(model.program.hoisted))
    program.reserve(*(str(s) for s in model.constants), *(str(s) for a in model.arguments for _, s in a.entries),
                    *(str(s) for s, _ in model.program.assignments))

    # ∂ sin(x)/∂x = cos(x): the program's own variable for cos(x) where it has one
    known = {e: sym for sym, e in model.program.assignments if isinstance(e, (se.sin, se.cos))}

    def tangents(e, label):
        free = [x for x in e.free_symbols if x in tangent]
        if not free:
            return {}
        partial = {x: _without_step_derivatives(e.diff(x)) for x in free}
        if known:
            partial = {x: d.subs(known) for x, d in partial.items()}
        out = {}
        for d in sorted({d for x in free for d in tangent[x]}):
            value = sum((partial[x] * tangent[x][d] for x in free if d in tangent[x]), se.Integer(0))
            value = program.let(f"D{d + 1}{label}", value)
            if value != 0:
                out[d] = value
        return out

    for s, e in model.program.assignments:
        t = tangents(e, str(s))
        if t:
            tangent[s] = t
    outputs = []
    for p in range(len(wrt)):
        for o in model.outputs:
            t = tangents(se.sympify(o), "OUT")
            outputs += [t.get(p * n + k, se.Integer(0)) for k in range(n)]
    keep = outputs + [x for _, pivot, scale in model.checks for x in (pivot, scale)]
    pruned = program.pruned(keep)
    # the constants the derivative still reads (a derivative can lose one, e.g. gravity on a Cartesian robot,
    # which the C compiler would flag as unused)
    used = set()
    for e in [e for _, e in pruned.assignments] + keep:
        used |= se.sympify(e).free_symbols
    return CustomizedModel(robot=model.robot, kind=kind, parameters=model.parameters, arguments=model.arguments,
                           output_shape=(len(wrt) * len(model.outputs), n), outputs=outputs, program=pruned,
                           constants={s: v for s, v in model.constants.items() if s in used},
                           options=dict(model.options), checks=list(model.checks))


def derivative_model(robot, kind: str, parameters: str = "standard", gravity: str = "constant",
                     wrenches: str = "none", friction: bool = True) -> CustomizedModel:
    """The customized model of ``kind`` (:data:`DERIVATIVE_KINDS`) of ``robot``: the forward-mode derivative
    (:func:`differentiated`) of its customized inverse or direct dynamic model (the other arguments as
    :func:`robodyn.symbolic.customized_model`'s)."""
    base, wrt, _ = DERIVATIVE_KINDS[kind]
    m = customized_model(robot, base, parameters=parameters, gravity=gravity, wrenches=wrenches, friction=friction)
    return differentiated(m, wrt, kind)


def parameters_input_model(robot, kind: str, constants: bool = False, **options) -> tuple:
    """The customized model of the dynamic or derivative ``kind`` with the nonzero inertial parameters and friction
    coefficients an argument ``params`` (:func:`robodyn.symbolic.codegen.c_code.with_parameter_input`); a
    derivative kind differentiates the model with that argument, so ``params`` keeps those whose derivative
    vanishes (the Coulomb and offset friction). The other arguments are :func:`robodyn.symbolic.customized_model`'s.

    Returns (model, names of ``params`` in order, their robot-file values (P,), and with ``constants`` the same
    model with the parameters as named constants, else None).
    """
    base, wrt, _ = DERIVATIVE_KINDS.get(kind, (kind, (), ()))
    m = customized_model(robot, base, symbolic_inertia=True, **options)
    names = parameter_names(m)
    values = {str(s): float(v) for s, v in m.constants.items()}

    def derived(x):
        return differentiated(x, wrt, kind) if wrt else x

    return (derived(with_parameter_input(m)), names, np.array([values[k] for k in names]),
            derived(m) if constants else None)
