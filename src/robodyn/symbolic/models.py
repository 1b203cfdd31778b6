"""Customized symbolic models (Khalil & Dombre §9.6): the public :func:`customized_model`.

A :class:`CustomizedModel` is a pruned straight-line program plus the description of its inputs
(q, q̇, q̈, τ, g, external wrenches) and outputs.  ``str(model)`` prints it as Khalil & Dombre's listings do;
``operation_count()`` gives the cost of Tables 9.5–9.6; the ``*_source`` methods emit NumPy, C99,
MATLAB and Julia code.
"""

from __future__ import annotations

from types import MappingProxyType
from dataclasses import dataclass, field
import warnings

import symengine as se

from robodyn.model.robot import check_robot
from robodyn.arrays import singular_model_error
from robodyn.errors import InputError, NumericOverflowError
from robodyn.dynamics.api import method_key
from robodyn.dynamics.composite import inertia_rows
from robodyn.dynamics.gibbs_appell import forward_components as gibbs_appell_forward
from robodyn.dynamics.gibbs_appell import inertia_components, torque_components
from robodyn.dynamics.spatial_operator import kozlowski_forward, kozlowski_torques
from robodyn.dynamics.trace import no_phase
from robodyn.dynamics.lagrange import cholesky_components
from robodyn.dynamics.newton_euler import rnea_components
from robodyn.dynamics.recursive import aba_components
from robodyn.model.friction import friction_law
from robodyn.parameters import standard_parameter_names
from robodyn.parameters.regressor import link_columns
from robodyn.symbolic.codegen import c_code, listing, numpy_code, text
from robodyn.symbolic.codegen.printer import Argument
from robodyn.symbolic.customize import INPUT_NAMES, WRENCH_NAMES, Recording, assignments, constants, standard_inertia
from robodyn.symbolic.engine import Program, total_ops

#: The kinds of model, named as the public numeric function each one equals (rd.inverse_dynamics, ...): robodyn's
#: one vocabulary for rd.compile, customized_model, robodyn generate and the operation counts.
KINDS = ("inverse_dynamics", "inertia_matrix", "gravity_torques", "bias_torques", "regressor", "forward_dynamics")
#: Short names used by the CLI and file names (SYMORO's: idm, inm, ddm, ...): aliases of :data:`KINDS`.
SHORT = MappingProxyType({"idm": "inverse_dynamics", "inm": "inertia_matrix", "ddm": "forward_dynamics",
                          "gra": "gravity_torques", "ccg": "bias_torques", "dim": "regressor"})
#: Every alias of a kind: the short names and the former names "gravity" and "bias" (still accepted).
ALIASES = MappingProxyType({**SHORT, "gravity": "gravity_torques", "bias": "bias_torques"})
#: The joint arguments of each kind (:data:`KINDS`, then the derivative and kinematics kinds of ``rd.compile``),
#: as the numeric function of that name takes them after ``robot``.
JOINT_ARGUMENTS = MappingProxyType({
    "inverse_dynamics": ("q", "qd", "qdd"),
    "bias_torques": ("q", "qd"),
    "gravity_torques": ("q",),
    "inertia_matrix": ("q",),
    "forward_dynamics": ("q", "qd", "tau"),
    "regressor": ("q", "qd", "qdd"),
    "inverse_dynamics_derivatives": ("q", "qd", "qdd"),
    "forward_dynamics_derivatives": ("q", "qd", "tau"),
    "jacobian": ("q",),
    "jacobian_dot_qd": ("q", "qd"),
})


def pivot_error(robot_name: str, label: str, joint: str):
    """The error of a compiled model (``label``: "compiled inverse_dynamics", "CUDA forward_dynamics", ...) whose
    pivot check of joint ``joint`` failed at some state: the numeric formulations' ModelError."""
    return singular_model_error(robot_name, f"{label}: joint {joint}: the pivot (articulated inertia H_j [9.116]) "
                                "is below 64 ε of its scale at some state")


def overflow_error(robot_name: str, label: str, dtype: str = "float64") -> NumericOverflowError:
    """The error of a compiled model whose result is not finite although its inputs are."""
    return NumericOverflowError(
        f"{label} of robot '{robot_name}': the result is not finite (floating-point overflow in {dtype}) although "
        "every input is finite; some input is too large (e.g. a velocity of 1e155), give values of physical size")


def canonical_kind(kind, kinds=KINDS) -> str:
    """The kind ``kind`` names (itself or an alias of :data:`ALIASES`), checked to be one of ``kinds``, or
    :class:`InputError` listing them (and their aliases)."""
    name = ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if name not in kinds:
        aliases = ", ".join(f"{a} = {k}" for a, k in ALIASES.items() if k in kinds)
        raise InputError(f"kind = {kind!r}; choose one of {', '.join(kinds)} (aliases: {aliases})")
    return name


#: What each kind computes and how each method computes it: the title of a model's listing.
_SUBJECTS = MappingProxyType({
    "inverse_dynamics": "Inverse dynamic model",
    "inertia_matrix": "Inertia matrix",
    "gravity_torques": "Gravity torques Q(q) (qd = qdd = 0)",
    "bias_torques": "H(q, qd) = C qd + Q + friction + external (qdd = 0, [9.95])",
    "regressor": "Dynamic identification model (regressor) Gamma = Phi K [9.36]",
    "forward_dynamics": "Direct dynamic model",
})
_METHOD_TITLES = MappingProxyType({
    "newton_euler": "the customized Newton-Euler algorithm [9.84]-[9.94]",
    "composite": "composite links (Appendix 8)",
    "recursive": "the recursive Newton-Euler algorithm (section 9.7.2)",
    "cholesky": "A, H and an LDL^T solve (section 9.7.1)",
    "gibbs_appell": "the Gibbs-Appell formulation (Mata et al.)",
    "spatial_operator": "spatial operators (Kozlowski)",
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
        return listing.listing(self, f"{_SUBJECTS[self.kind]} by {_METHOD_TITLES[self.options['method']]}")

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
        return numpy_code.source(self, name or self.name)

    def numpy_function(self):
        """A Python function evaluating whole batches with NumPy: f(*arrays) -> (..., *output_shape)."""
        return numpy_code.function(self)

    def c_source(self, name: str | None = None) -> str:
        return c_code.source(self, name or _c_name(self.name))

    def matlab_source(self, name: str | None = None) -> str:
        return text.matlab(self, name or _c_name(self.name))

    def julia_source(self, name: str | None = None) -> str:
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
    method: str | None = None,
    ddm_method: str | None = None,
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
    method : str, optional
        The formulation traced, named as the ``method=`` of the numeric function (:data:`METHODS`):

        - inverse dynamics, bias and gravity torques: "newton_euler" (default; Khalil & Dombre [9.84]–[9.94]),
          "gibbs_appell" (Mata et al. §4.1), "spatial_operator" (Kozłowski (3.24)–(3.33));
        - inertia matrix: "composite" (default; Appendix 8), "gibbs_appell" (Mata et al. §4.2);
        - forward dynamics: "recursive" (default; the O(n) algorithm of §9.7.2, [9.100]–[9.124]), "cholesky"
          (A, H and an LDLᵀ solve, §9.7.1), "gibbs_appell" (Mata et al. Table 3), "spatial_operator"
          (Kozłowski's Kalman filter and smoother (3.46)–(3.58));
        - the regressor has one: the link columns of :func:`robodyn.regressor`.

        Pinocchio's names are accepted as for the numeric functions (rnea, crba, aba).
    ddm_method : "recursive" | "cholesky", deprecated
        The former name of ``method`` for the forward dynamics (a DeprecationWarning).

    Returns
    -------
    CustomizedModel

    Raises
    ------
    InputError
        An unknown kind, method or option (the choices are listed).
    ModelError
        Forward dynamics of a robot whose model is singular for every q (a pivot that is a constant of the robot
        and zero: a joint that moves no mass and has no rotor inertia), as the numeric function reports it.
    """
    check_robot(robot)
    kind = canonical_kind(kind)
    _choice("parameters", parameters, ("standard", "base"))
    method = _method(kind, method, ddm_method)
    _choice("gravity", gravity, ("constant", "input"))
    wrench_frames = {"none": [], "terminal": [robot.nf - 1], "all": list(range(robot.nf))}
    _choice("wrenches", wrenches, tuple(wrench_frames))
    if parameters == "base" and kind != "regressor":  # the regressor's columns do not use the values
        from robodyn.symbolic.baseparams import base_inertia

        inertia = base_inertia(robot, symbolic_geometry)
    else:
        inertia = standard_inertia(robot)
    prog = Program()
    consts = constants(prog, robot, symbolic_geometry, symbolic_inertia, inertia,
                       gravity=gravity == "constant" and kind != "inertia_matrix")
    rec = Recording()
    frames = [int(f) + 1 for f in robot.joint_frames]
    names = JOINT_ARGUMENTS[kind]
    x = {k: rec.inputs([se.Symbol(f"{INPUT_NAMES[k]}{j}") for j in frames]) for k in names}
    args = [Argument(k, (robot.n,), tuple(enumerate(rec.symbols[v.k] for v in x[k]))) for k in names]
    if kind == "inertia_matrix":
        g = None
    elif gravity == "input":
        g = rec.inputs([se.Symbol(f"G{k}") for k in (1, 2, 3)])
        args.append(Argument("gravity", (3,), tuple(enumerate(rec.symbols[v.k] for v in g))))
    else:
        g = consts.gravity
    wr = None
    if kind in ("inverse_dynamics", "bias_torques", "forward_dynamics") and wrench_frames[wrenches]:
        wr, entries = [0.0] * (6 * robot.nf), []
        for i in wrench_frames[wrenches]:
            wr[6 * i:6 * i + 6] = rec.inputs([se.Symbol(f"{w}{i + 1}") for w in WRENCH_NAMES])
            entries += [(6 * i + c, rec.symbols[v.k]) for c, v in enumerate(wr[6 * i:6 * i + 6])]
        args.append(Argument("wrenches", (robot.nf, 6), tuple(entries)))
    outs, out_names, shape, columns = _TRACED[kind](consts, rec, x, g, wr, friction, method, parameters)
    outputs, checks = assignments(prog, rec, outs, out_names)
    # a check's label: a joint's name, or the index of a joint (a Cholesky pivot)
    checks = [(robot.joint_names[j] if isinstance(j, int) else j, p, t) for j, p, t in checks]
    reached = list(outputs) + [e for _, p, t in checks for e in (p, t)]
    pruned = prog.pruned(reached)
    used = set().union(*(e.free_symbols for _, e in pruned.assignments),
                       *(se.sympify(o).free_symbols for o in reached))
    return CustomizedModel(
        robot=robot, kind=kind, parameters=parameters, arguments=args, output_shape=shape, outputs=outputs,
        program=pruned, constants={s: v for s, v in consts.values.items() if s in used}, column_names=columns,
        checks=checks,
        options=dict(symbolic_geometry=symbolic_geometry, symbolic_inertia=symbolic_inertia, gravity=gravity,
                     wrenches=wrenches, friction=friction, method=method),
    )


def _choice(name: str, value, choices: tuple) -> None:
    if value not in choices:
        raise InputError(f"{name} = {value!r}; choose {', '.join(map(repr, choices[:-1]))} or {choices[-1]!r}")


def _torques(consts, rec, x, g, wr, friction, method, parameters):
    """Γ = Γ_rigid + Ia q̈ + Γ_f [9.94] (inverse dynamics), H with q̈ = 0 (bias) or Q(q) (gravity)."""
    robot = consts.robot
    tau = recursion(robot, "inverse_dynamics", method, rec.backend, x, g, wr)
    if "qdd" in x:
        tau = [t + Ia * a for t, Ia, a in zip(tau, robot.derived.Ia, x["qdd"])]
    if friction and "qd" in x:
        tau = [t + f for t, f in zip(tau, _friction(consts, x["qd"], rec.backend))]
    name = {3: "GAM", 2: "H", 1: "QG"}[len(x)]
    return tau, [f"{name}{int(f) + 1}" for f in robot.joint_frames], (robot.n,), []


def _friction(consts, qd, backend) -> list:
    """Γ_f of every joint [9.26]–[9.28], by robodyn's one friction law."""
    return [friction_law(v, *c, backend) for v, c in zip(qd, consts.friction)]


def _inertia(consts, rec, x, g, wr, friction, method, parameters):
    """A(q) by composite links (Khalil & Dombre Appendix 8), rotor inertias on the diagonal; A_ik = A_ki."""
    frames = [int(f) + 1 for f in consts.robot.joint_frames]
    n = len(frames)
    names = [f"A{frames[min(i, k)]}{frames[max(i, k)]}" for i in range(n) for k in range(n)]
    return recursion(consts.robot, "inertia_matrix", method, rec.backend, x), names, (n, n), []


def _forward(consts, rec, x, g, wr, friction, method, parameters):
    """q̈ by the recursive algorithm of §9.7.2 or by A q̈ = Γ − H and an LDLᵀ factorisation (§9.7.1)."""
    robot = consts.robot
    if friction:
        x = {**x, "tau": [t - f for t, f in zip(x["tau"], _friction(consts, x["qd"], rec.backend))]}  # [9.106]
    qdd = recursion(robot, "forward_dynamics", method, rec.backend, x, g, wr)
    return qdd, [f"QDD{int(f) + 1}" for f in robot.joint_frames], (robot.n,), []


def recursion(robot, kind: str, method: str, backend, x: dict, g=None, wr=None, phase=no_phase) -> list:
    """The outputs of the component recursion of ``method`` for ``kind`` (:data:`METHODS`), on the scalars of
    ``backend``: what a customized model (and :func:`robodyn.symbolic.formulations.recorded_model`) traces.

    Parameters
    ----------
    kind : "inverse_dynamics" (bias and gravity torques: without q̇ or q̈ in ``x``), "inertia_matrix" or
        "forward_dynamics".
    x : dict of joint inputs, n scalars each: "q", and "qd", "qdd" (torques) or "qd", "tau" (forward dynamics; τ
        without friction, [9.106]).
    g, wr : gravity in R_0 (3 scalars) and the wrench rows flattened (6 nf scalars) or None.
    phase : callable, told the name of each recursion as it starts (Kozłowski's and Mata et al.'s per-row counts).

    Returns
    -------
    list: the rigid-body joint torques (rotor inertia and friction not included), A row-major with the rotor
    inertias on its diagonal, or q̈.
    """
    q, zero = x["q"], [0.0] * robot.n
    qd = x.get("qd", zero)
    if kind == "inverse_dynamics":
        qdd = x.get("qdd", zero)
        if method == "newton_euler":
            return rnea_components(robot, q, qd, qdd, g, wr, backend)
        if method == "gibbs_appell":
            return torque_components(robot, q, qd, qdd, g, wr, backend, phase)
        return kozlowski_torques(robot, q, qd, qdd, g, wr, backend, phase)
    if kind == "inertia_matrix":
        A = inertia_rows(robot, q, backend) if method == "composite" else inertia_components(robot, q, backend, phase)
        return [e for row in A for e in row]
    tau = x["tau"]
    if method == "recursive":
        return aba_components(robot, q, qd, tau, g, wr, backend)
    if method == "gibbs_appell":
        return gibbs_appell_forward(robot, q, qd, tau, g, wr, backend, phase, check=True)
    if method == "spatial_operator":
        return kozlowski_forward(robot, q, qd, tau, g, wr, backend, phase)
    phase("inertia matrix")
    A = inertia_rows(robot, q, backend)
    phase("bias vector")
    H = rnea_components(robot, q, qd, zero, g, wr, backend)
    phase("Cholesky factorisation and solve")
    return cholesky_components(A, [t - h for t, h in zip(tau, H)])


def _regressor(consts, rec, x, g, wr, friction, method, parameters):
    """The columns of Φ [9.36] kept by ``parameters`` (those of rd.regressor or of the base parameters)."""
    robot = consts.robot
    standard, columns = regressor_columns(robot.robot, parameters, friction)
    q, qd, qdd = x["q"], x["qd"], x["qdd"]
    n = robot.n
    table = {(k, col): value for k, col, value in link_columns(robot, q, qd, qdd, g, backend=rec.backend)}
    s = [rec.backend.sign(v) for v in qd]
    index = {name: c for c, name in enumerate(standard_parameter_names(robot.robot, friction))}
    joint = {int(f): k for k, f in enumerate(robot.joint_frames)}
    out = [[0.0] * len(standard) for _ in range(n)]
    for c, name in enumerate(standard):
        col = index[name]
        if col < 11 * robot.nf:
            frame, p = divmod(col, 11)
            for k in range(n):
                out[k][c] = qdd[joint[frame]] if p == 10 and k == joint.get(frame) else table.get((k, col), 0.0)
        else:
            k, law = divmod(col - 11 * robot.nf, 3)
            out[k][c] = (s[k], qd[k], 1.0)[law]
    names = [f"DG{k + 1}_{tag}" for k in range(n) for tag in columns]
    return [e for row in out for e in row], names, (n, len(columns)), list(columns)


#: The formulations of each kind that have a customized model (named as the numeric functions' ``method=``).
METHODS = MappingProxyType({
    "inverse_dynamics": ("newton_euler", "gibbs_appell", "spatial_operator"),
    "gravity_torques": ("newton_euler", "gibbs_appell", "spatial_operator"),
    "bias_torques": ("newton_euler", "gibbs_appell", "spatial_operator"),
    "inertia_matrix": ("composite", "gibbs_appell"),
    "forward_dynamics": ("recursive", "cholesky", "gibbs_appell", "spatial_operator"),
    "regressor": ("newton_euler",),
})


def _method(kind: str, method, ddm_method) -> str:
    """The formulation of a customized model, checked: ``method`` by the numeric functions' names
    (:func:`robodyn.dynamics.api.method_key`), the kind's default when None."""
    if ddm_method is not None:
        if kind != "forward_dynamics" or method is not None:
            raise InputError("ddm_method is the former name of method for kind='forward_dynamics'; give method only")
        warnings.warn("customized_model(ddm_method=...) is deprecated; use method=...", DeprecationWarning,
                      stacklevel=3)
        method = ddm_method
    choices = METHODS[kind]
    if method is None:
        return choices[0]
    what = {"gravity_torques": "inverse_dynamics", "bias_torques": "inverse_dynamics"}.get(kind, kind)
    try:
        key = method_key(what, method) if what in ("inverse_dynamics", "inertia_matrix", "forward_dynamics") else method
    except InputError:
        key = None
    if key not in choices:
        raise InputError(f"method = {method!r}: the customized {kind} models are {', '.join(choices)}")
    return key


_TRACED = MappingProxyType({"inverse_dynamics": _torques, "gravity_torques": _torques, "bias_torques": _torques,
                            "inertia_matrix": _inertia, "forward_dynamics": _forward, "regressor": _regressor})


def regressor_columns(robot, parameters: str, friction: bool):
    """(standard names, column names) of the regressor: those of ``rd.regressor`` (``parameters="standard"``)
    or of ``rd.base_parameters(robot, friction=friction)`` (``.standard``, ``.names``)."""
    if parameters == "standard":
        names = standard_parameter_names(robot, friction)
        return names, names
    from robodyn.parameters import base_parameters

    bp = base_parameters(robot, method="symbolic", friction=friction)
    return list(bp.standard), list(bp.names)
