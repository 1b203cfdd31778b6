"""Customized symbolic models (Khalil & Dombre §9.6): the public :func:`customized_model`.

A :class:`CustomizedModel` is a pruned straight-line program plus the description of its inputs
(q, q̇, q̈, τ, g, external wrenches) and outputs.  ``str(model)`` prints it as Khalil & Dombre's listings do;
``operation_count()`` gives the cost of Tables 9.5–9.6; the ``*_source`` methods emit NumPy, C99,
MATLAB and Julia code.
"""

from __future__ import annotations

from types import MappingProxyType
from dataclasses import dataclass, field

import symengine as se

from robodyn.model.robot import check_robot
from robodyn.errors import InputError
from robodyn.symbolic import composite, newton_euler as ne
from robodyn.symbolic.codegen.printer import Argument
from robodyn.symbolic.engine import Program, total_ops
from robodyn.symbolic.regressor import regressor
from robodyn.symbolic.symrobot import WRENCH_NAMES, build, inertia_table

#: The kinds of model, named as the public numeric function each one equals (rd.inverse_dynamics, ...): robodyn's
#: one vocabulary for rd.compile, customized_model, robodyn generate and the operation counts.
KINDS = ("inverse_dynamics", "inertia_matrix", "gravity_torques", "bias_torques", "regressor", "forward_dynamics")
#: Short names used by the CLI and file names (SYMORO's: idm, inm, ddm, ...): aliases of :data:`KINDS`.
SHORT = MappingProxyType({"idm": "inverse_dynamics", "inm": "inertia_matrix", "ddm": "forward_dynamics",
                          "gra": "gravity_torques", "ccg": "bias_torques", "dim": "regressor"})
#: Every alias of a kind: the short names and the former names "gravity" and "bias" (still accepted).
ALIASES = MappingProxyType({**SHORT, "gravity": "gravity_torques", "bias": "bias_torques"})


def canonical_kind(kind, kinds=KINDS) -> str:
    """The kind ``kind`` names (itself or an alias of :data:`ALIASES`), checked to be one of ``kinds``, or
    :class:`InputError` listing them (and their aliases)."""
    name = ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if name not in kinds:
        aliases = ", ".join(f"{a} = {k}" for a, k in ALIASES.items() if k in kinds)
        raise InputError(f"kind = {kind!r}; choose one of {', '.join(kinds)} (aliases: {aliases})")
    return name


_TITLES = MappingProxyType({
    "inverse_dynamics": "Inverse dynamic model using the customized Newton-Euler algorithm [9.84]-[9.94]",
    "inertia_matrix": "Inertia matrix using composite links (Appendix 8)",
    "gravity_torques": "Gravity torques Q(q): Newton-Euler with qd = qdd = 0",
    "bias_torques": "H(q, qd) = C qd + Q + friction + external: Newton-Euler with qdd = 0 [9.95]",
    "regressor": "Dynamic identification model (regressor) Gamma = Phi K [9.36]",
    "forward_dynamics": "Direct dynamic model by the recursive Newton-Euler algorithm (section 9.7.2)",
})


@dataclass
class CustomizedModel:
    """A customized model: program, inputs, outputs and constants.

    Attributes
    ----------
    kind : str — one of :data:`KINDS`.
    arguments : list of Argument — in call order (q, qd, qdd or tau, gravity, wrenches).
    output_shape : tuple — (n,), (n, n) or (n, n_params).
    outputs : list of Expr — row-major elements of the output (symbols of the program or numbers).
    program : Program — the assignments, pruned to what reaches the outputs.
    constants : dict Symbol -> float — values of the geometric/inertial symbols.
    column_names : list of str — regressor columns (parameter names), else empty.
    checks : list of (str, Expr, Expr) — forward dynamics: (joint name, pivot, scale) per joint; the generated
        code tests pivot > 64 ε scale (:data:`robodyn.symbolic.direct.PIVOT_EPS`), the relative pivot test of the
        numeric formulations, and reports a singular model where it fails.
    """

    robot: object
    kind: str
    parameters: str
    arguments: list
    output_shape: tuple
    outputs: list
    program: Program
    constants: dict
    column_names: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)

    # ---- reports ---------------------------------------------------------------------------------------
    def operation_count(self) -> dict:
        """{"mul", "add", "sincos"} of the model (divisions as multiplications, subtractions as additions);
        an "other" key (sign, exp, ...) appears only when nonzero."""
        c = total_ops(e for _, e in self.program.per_call())
        c2 = total_ops(o for o in self.outputs if not isinstance(o, se.Symbol))
        out = {k: c[k] + c2[k] for k in c}
        if out["other"] == 0:
            del out["other"]
        return out

    @property
    def name(self) -> str:
        return f"{self.robot.name}_{self.kind}"

    def __str__(self) -> str:
        from robodyn.symbolic.codegen.listing import listing

        return listing(self, _TITLES[self.kind])

    def __repr__(self) -> str:
        c = self.operation_count()
        return (f"CustomizedModel({self.robot.name!r}, {self.kind!r}, parameters={self.parameters!r}, "
                f"{len(self.program.assignments)} assignments, {c['mul']} mul, {c['add']} add)")

    def closed_form(self):
        """The outputs as closed-form sympy expressions (assignments substituted back; small models only)."""
        import sympy as sp

        values = {}
        for sym, e in self.program.assignments:
            values[sym] = se.sympify(e).xreplace(values) if values else e
        return [sp.sympify(se.sympify(o).xreplace(values)) for o in self.outputs]

    # ---- code generation ------------------------------------------------------------------------------
    def numpy_source(self, name: str | None = None) -> str:
        from robodyn.symbolic.codegen import numpy_code

        return numpy_code.source(self, name or self.name)

    def numpy_function(self):
        """A Python function evaluating whole batches with NumPy: f(*arrays) -> (..., *output_shape)."""
        from robodyn.symbolic.codegen import numpy_code

        return numpy_code.function(self)

    def c_source(self, name: str | None = None) -> str:
        from robodyn.symbolic.codegen import c_code

        return c_code.source(self, name or _c_name(self.name))

    def matlab_source(self, name: str | None = None) -> str:
        from robodyn.symbolic.codegen import text

        return text.matlab(self, name or _c_name(self.name))

    def julia_source(self, name: str | None = None) -> str:
        from robodyn.symbolic.codegen import text

        return text.julia(self, name or _c_name(self.name))


def _c_name(s: str) -> str:
    out = "".join(ch if ch.isalnum() else "_" for ch in s)
    return out if out[:1].isalpha() else "m_" + out


def customized_model(
    robot,
    kind: str = "inverse_dynamics",
    parameters: str = "standard",
    symbolic_geometry: bool = False,
    symbolic_inertia: bool = False,
    gravity: str = "constant",
    wrenches: str = "none",
    friction: bool = True,
    ddm_method: str = "recursive",
) -> CustomizedModel:
    """Generate the customized symbolic model ``kind`` of ``robot`` (Khalil & Dombre §9.6).

    Parameters
    ----------
    robot : Robot
    kind : "inverse_dynamics" | "inertia_matrix" | "gravity_torques" | "bias_torques" | "regressor" |
        "forward_dynamics" (:data:`KINDS`: the model equals the numeric function of that name), or an alias of
        :data:`ALIASES` (the short names idm, inm, gra, ccg, dim, ddm; "gravity", "bias").
    parameters : "standard" | "base"
        Inertial parameters used: the standard ones (XXj ... Mj, IAj) or the base parameters of §9.4
        (grouped ones named XXRj, ...; eliminated ones are zero).
    symbolic_geometry : bool
        Keep every geometric constant other than 0, ±π/2, π as a symbol (D3, RL4, AL2, ...).
    symbolic_inertia : bool
        Keep every nonzero inertial parameter (and friction coefficient) as a symbol (XX1, MY2, FV3, ...).
    gravity : "constant" | "input"
        Gravity as constants G1..G3 (zeros of ``robot.gravity`` stay zeros) or as an argument.
    wrenches : "none" | "terminal" | "all"
        Frames with external-wrench inputs FXj..CZj (inverse dynamics, bias, forward dynamics).
    friction : bool
        Include Γ_f = FS sign(q̇) + FV q̇ + FO (+ Stribeck) [9.26] in inverse dynamics, bias, direct dynamics;
        for the regressor, append the friction columns (Fc_k, Fv_k, Foff_k, or their base parameters).

    The regressor's columns are those of ``rd.regressor(robot, ..., friction=friction)`` (standard: 11 per
    frame XX..M, Ia, then Fc, Fv, Foff per joint; ``column_names``) or of
    ``rd.base_parameters(robot, friction=friction).regressor`` in ``.names`` order (base).
    ddm_method : "recursive" | "cholesky"
        Direct dynamics by the O(n) recursive algorithm of §9.7.2 or by A, H and an LDLᵀ solve (§9.7.1).

    Returns
    -------
    CustomizedModel
    """
    check_robot(robot)
    kind = canonical_kind(kind)
    if parameters not in ("standard", "base"):
        raise InputError(f"parameters = {parameters!r}; choose 'standard' or 'base'")
    if ddm_method not in ("recursive", "cholesky"):
        raise InputError(f"ddm_method = {ddm_method!r}; choose 'recursive' or 'cholesky'")
    if parameters == "base" and kind != "regressor":  # the regressor's columns do not use the values
        from robodyn.symbolic.baseparams import base_inertia

        inertia = base_inertia(robot, symbolic_geometry)
    else:
        inertia = inertia_table(robot)
    prog = Program()
    sr = build(prog, robot, symbolic_geometry, symbolic_inertia, inertia=inertia,
               gravity=gravity if kind not in ("inertia_matrix",) else "constant",
               wrenches=wrenches if kind in ("inverse_dynamics", "bias_torques", "forward_dynamics") else "none",
               friction=friction)
    n = robot.n
    zeros = ne.zeros_like(sr.qd)
    columns: list = []
    checks: list = []
    names = ["q", "qd", "qdd"]
    if kind == "inverse_dynamics":
        outs = ne.inverse_dynamics(prog, sr, friction=friction)
        shape = (n,)
    elif kind == "gravity_torques":
        outs = ne.inverse_dynamics(prog, sr, qd=zeros, qdd=zeros, wrenches=False, friction=False, name="QG")
        shape, names = (n,), ["q"]
    elif kind == "bias_torques":
        outs = ne.inverse_dynamics(prog, sr, qdd=zeros, friction=friction, name="H")
        shape, names = (n,), ["q", "qd"]
    elif kind == "inertia_matrix":
        outs = composite.inertia_matrix(prog, sr)
        shape, names = (n, n), ["q"]
    elif kind == "regressor":
        standard, columns = regressor_columns(robot, parameters, friction)
        outs = regressor(prog, sr, standard, columns)
        shape = (n, len(columns))
    else:
        from robodyn.symbolic import direct

        algo = direct.forward_dynamics_recursive if ddm_method == "recursive" else direct.forward_dynamics
        outs, pivots = algo(prog, sr, friction=friction)
        checks = [(robot.joint_names[i], p, s) for i, p, s in pivots]
        shape, names = (n,), ["q", "qd", "tau"]
    args = [Argument(k, (n,), tuple(enumerate(sr.inputs[k]))) for k in names]
    if "gravity" in sr.inputs and kind not in ("inertia_matrix",):
        args.append(Argument("gravity", (3,), tuple(enumerate(sr.inputs["gravity"]))))
    if "wrenches" in sr.inputs:
        nf = robot.nf
        ent = [(int(str(s)[2:]) - 1) * 6 + WRENCH_NAMES.index(str(s)[:2])
               for s in sr.inputs["wrenches"]]
        args.append(Argument("wrenches", (nf, 6), tuple(zip(ent, sr.inputs["wrenches"]))))
    used = set()
    pruned = prog.pruned(list(outs) + [e for _, p, s in checks for e in (p, s)])
    for _, e in pruned.assignments:
        used |= e.free_symbols
    for o in list(outs) + [e for _, p, s in checks for e in (p, s)]:
        used |= se.sympify(o).free_symbols
    constants = {s: v for s, v in sr.constants.items() if s in used}
    return CustomizedModel(
        robot=robot, kind=kind, parameters=parameters, arguments=args, output_shape=shape, outputs=list(outs),
        program=pruned, constants=constants, column_names=columns, checks=checks,
        options=dict(symbolic_geometry=symbolic_geometry, symbolic_inertia=symbolic_inertia, gravity=gravity,
                     wrenches=wrenches, friction=friction, ddm_method=ddm_method),
    )


def regressor_columns(robot, parameters: str, friction: bool):
    """(standard names, column names) of the regressor: those of ``rd.regressor`` (``parameters="standard"``)
    or of ``rd.base_parameters(robot, friction=friction)`` (``.standard``, ``.names``)."""
    if parameters == "standard":
        from robodyn.parameters import standard_parameter_names

        names = standard_parameter_names(robot, friction)
        return names, names
    from robodyn.parameters import base_parameters

    bp = base_parameters(robot, method="symbolic", friction=friction)
    return list(bp.standard), list(bp.names)
