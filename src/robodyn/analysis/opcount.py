"""Operation counts of the dynamics algorithms, measured by running ONE scalar evaluation on counting scalars.

Every joint input is a :class:`~robodyn.analysis.traced.Traced` number (an object array of them goes through the
same batched NumPy code as float arrays); the counting rules are in :mod:`robodyn.analysis.traced`.

The counting robots (:func:`counting_robot`) are general serial arms with revolute joints only (the published
"worst case"): random non-special twist angles α and lengths d, r, full inertia tensors and first moments,
θ offsets 0 (an offset only shifts q), no rotor inertia and no friction (the published models have neither),
gravity along −z_0.  The counts depend on that structure only, never on the random values.
"""

from __future__ import annotations

from collections import Counter
from types import MappingProxyType
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import import_module

import numpy as np

from robodyn.analysis.traced import Tally, Traced, counting, traced_array, values
from robodyn.dynamics import api
from robodyn.dynamics.trace import COST, KINDS as OP_KINDS
from robodyn.errors import InputError
from robodyn.model.inertia import standard_from_com
from robodyn.model.robot import Robot
from robodyn.spatial import rot_x, rot_z


# --- the counting conventions of the papers ----------------------------------------------------------------
@dataclass(frozen=True)
class Convention:
    """How a paper counts: ``columns`` maps each operation of the tracer's IR to the count columns it adds to
    (:data:`robodyn.dynamics.trace.KINDS`; an empty tuple: free).  ``source`` is where the paper states it,
    ``rule`` the rule in the paper's words (paraphrased)."""

    name: str
    source: str
    rule: str
    columns: MappingProxyType

    def count(self, ops) -> dict:
        """{"mul", "add", "sin", "cos", "sqrt", "other", "div"} of the IR operation names ``ops``."""
        counts = Counter(column for op in ops for column in self.columns[op])
        return {kind: counts[kind] for kind in OP_KINDS}


_DIVISIONS = ("div", "rdiv", "divc", "cdiv")


def _columns(**changes) -> MappingProxyType:
    """robodyn's columns (:data:`robodyn.dynamics.trace.COST`, divisions also in ``div``) with ``changes``."""
    base = {op: (() if kind is None else (kind,)) + (("div",) if op in _DIVISIONS else ())
            for op, kind in COST.items()}
    return MappingProxyType({**base, **changes})


#: The counting rule of each paper whose counts the report compares with, and robodyn's own (the default).
#: Common to all: operations between constants of the robot are done off-line and free, an operation with 0 or
#: ±1 folds (the customizing of Khalil & Dombre §9.6.2, which Kozłowski §4 and Mata et al. §4 follow), and a
#: negation is free (the sign travels with the value).
CONVENTIONS: MappingProxyType[str, Convention] = MappingProxyType({
    "robodyn": Convention(
        "robodyn", "docs/symbolic.md, Operation counts",
        "mul = multiplications and divisions (by constants of the robot included), add = additions and "
        "subtractions; sines, cosines, square roots and other functions counted apart; sign, |x| free",
        _columns()),
    "khalil_dombre": Convention(
        "khalil_dombre", "Khalil & Dombre §9.6.2–§9.6.3, Tables 9.5–9.6",
        "customizing eliminates multiplications by one, minus one and zero and additions with zero; the model "
        "is counted in multiplications and additions (a division is a multiplication; the sines and cosines "
        "S_j, C_j are intermediate variables outside both); a Coulomb and viscous friction model adds n "
        "multiplications, 2n additions and n sign functions (§9.6.3): the sign functions are counted (in "
        "'other')",
        _columns(sign=("other",))),
    "mata": Convention(
        "mata", "Mata et al. §4, Tables 1–4",
        "products (M) and sums (A) of each step; products of constants are computed off-line (e.g. m_i r_i, "
        "§4.2 step 4); the Cholesky decomposition costs n³/6 + n²/2 + n/3 products (Table 3), i.e. its "
        "n(n² − 1)/6 multiplications, n(n − 1)/2 divisions and n square roots are all products; rotations use "
        "trigonometric identities and the sines and cosines are not counted",
        _columns(sqrt=("mul", "sqrt"))),
    "kozlowski": Convention(
        "kozlowski", "Kozłowski §4, Tables 1–2",
        "scalar multiplications, additions/subtractions and divisions, each in its own column (Table 2: "
        "264n − 349 multiplications, 6n − 10 divisions; '1261 multiplications/divisions' for n = 6 is their "
        "sum); zero and unity elements are propagated as 0 and 1; the totals do not include the evaluation of "
        "the sines and cosines",
        _columns(**{op: ("div",) for op in _DIVISIONS})),
})


def counting_convention(name: str) -> Convention:
    """The :class:`Convention` ``name`` (a key of :data:`CONVENTIONS`), or :class:`InputError`."""
    if name not in CONVENTIONS:
        raise InputError(f"convention = {name!r}; choose one of {', '.join(CONVENTIONS)}")
    return CONVENTIONS[name]


# --- the counting robots and one evaluation per method -----------------------------------------------------
def counting_robot(n: int, seed: int = 0) -> Robot:
    """A general serial arm with ``n`` revolute joints (see the module docstring)."""
    rng = np.random.default_rng(seed)
    params = []
    for _ in range(n):
        a, b, c = rng.uniform(0.01, 0.5, 3)
        R = rot_z(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3)) @ rot_z(rng.uniform(-3, 3))
        inertia_com = R @ np.diag([a + b, b + c, a + c]) @ R.T
        params.append(standard_from_com(rng.uniform(0.5, 5), rng.uniform(-0.3, 0.3, 3), inertia_com))
    return Robot(
        name=f"general{n}R", sigma=np.zeros(n, int), alpha=rng.uniform(0.2, 1.3, n) * rng.choice([-1, 1], n),
        d=rng.uniform(0.1, 0.5, n), r=rng.uniform(0.1, 0.5, n), params=np.array(params), gravity=[0, 0, -9.81],
    )


#: (kind, method) -> function name in the method's module and its joint arguments.
_KINDS = MappingProxyType({
    "inverse": (api.INVERSE, "inverse_dynamics", ("q", "qd", "qdd")),
    "inertia": (api.INERTIA, "inertia_matrix", ("q",)),
    "forward": (api.FORWARD, "forward_dynamics", ("q", "qd", "tau")),
})
#: The kinds counted, by the name of the public function counted (robodyn's one vocabulary) -> the short name the
#: report's rows and ``MethodCount.kind`` use ("inverse", "inertia", "forward", also accepted as kinds).
COUNTED_KINDS = MappingProxyType({"inverse_dynamics": "inverse", "inertia_matrix": "inertia",
                                  "forward_dynamics": "forward"})


def counted_kind(kind: str) -> str:
    """The short name of the counted ``kind`` (a public function name of :data:`COUNTED_KINDS` or its short
    name), or :class:`InputError` listing them."""
    short = COUNTED_KINDS.get(kind, kind) if isinstance(kind, str) else kind
    if short not in _KINDS:
        raise InputError(f"kind = {kind!r}; choose one of {', '.join(COUNTED_KINDS)} (short names: "
                         f"{', '.join(_KINDS)})")
    return short


def count_operations(robot: Robot, kind: str, method: str, seed: int = 1) -> tuple[Tally, np.ndarray, np.ndarray]:
    """Count one scalar evaluation of ``rd.<kind>(robot, ..., method=method)``; ``kind``: "inverse_dynamics",
    "inertia_matrix" or "forward_dynamics" (or the short names "inverse", "inertia", "forward").

    Returns
    -------
    tally : Tally
    traced_result : ndarray of float, the counted evaluation's values
    float_result : ndarray, the same call on float64 inputs (they must agree: the counting changes nothing)
    """
    kind = counted_kind(kind)
    table, fname, names = _KINDS[kind]
    if method not in table:
        raise InputError(f"{kind}: unknown method '{method}'; choose one of {', '.join(table)}")
    fn = getattr(import_module(table[method]), fname)
    rng = np.random.default_rng(seed)
    # A batch of ONE sample: 0-d object arrays decay to Python scalars in NumPy, (1, n) keeps every array an array.
    args = [rng.uniform(-1.5, 1.5, (1, robot.n)) for _ in names]
    with counting() as tally:
        traced = fn(robot, *(traced_array(a) for a in args))
    return tally, values(traced), fn(robot, *args)


# --- the published formulas ------ -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Formula:
    """A published operation count: mul(n), add(n) as polynomial coefficients (highest power first); ``div``:
    the divisions where the paper counts them apart from ``mul`` (Kozłowski), else None."""

    source: str
    mul: tuple
    add: tuple | None = None
    div: tuple | None = None

    def at(self, n: int) -> tuple[float, float | None]:
        m = float(np.polyval(self.for_convention("robodyn")[1], n))
        return m, (None if self.add is None else float(np.polyval(self.add, n)))

    def for_convention(self, name: str) -> tuple[str, tuple, tuple | None]:
        """(source, mul, add) with the divisions where ``name`` counts them: in the multiplications, or apart."""
        if self.div is None:
            return self.source, self.mul, self.add
        if "mul" in CONVENTIONS[name].columns["div"]:
            return (f"{self.source} (mult + {format_polynomial(self.div)} div)",
                    _sum_polynomials(self.mul, self.div), self.add)
        return f"{self.source} (mult; {format_polynomial(self.div)} div apart)", self.mul, self.add


def _sum_polynomials(a, b) -> tuple:
    """a + b (coefficients, highest power first), whole coefficients as int."""
    return tuple(int(c) if float(c).is_integer() else float(c) for c in np.polyadd(a, b))


#: Published formulas compared with each (kind, method).  Divisions are counted as multiplications everywhere.
SEED_FORMULAS: MappingProxyType[tuple[str, str], list[Formula]] = MappingProxyType({
    ("inverse", "newton_euler"): [
        Formula("Khalil Table 9.5, Luh et al. N-E", (137, -22), (101, -11)),
        Formula("Mata Table 1, Luh et al. N-E", (150, -48), (131, -48)),
        Formula("Khalil Table 9.5, customized symbolic N-E", (92, -127), (81, -117)),
    ],
    ("inverse", "gibbs_appell"): [Formula("Mata Table 1, G-A", (96, -101), (84, -100))],
    ("inverse", "spatial_operator"): [Formula("Kozlowski Table 1, general axes", (142, -151), (109, -134))],
    # Table 1 counts the recursions of (3.7)-(3.14), the two-sided form; §4.1 calls it "slightly slower" than
    # the one-sided (3.24)-(3.33)
    ("inverse", "two_sided"): [Formula("Kozlowski Table 1, general axes", (142, -151), (109, -134))],
    ("inertia", "composite"): [Formula("Mata Table 2, Walker-Orin CRBA", (12, 56, -27), (7, 67, -56))],
    ("inertia", "gibbs_appell"): [Formula("Mata Table 2, G-A", (11.5, 19.5, -49), (8.5, 31.5, -69))],
    ("forward", "gibbs_appell"): [
        Formula("Mata Table 3, G-A total", (1 / 6, 13, 695 / 6, -157), (1 / 6, 10, 683 / 6, -174)),
    ],
    ("forward", "spatial_operator"): [
        Formula("Kozlowski Table 2, filter+smoother", (264, -349), (264, -411), div=(6, -10)),
    ],
})
#: Published totals for n = 6 only (Mata Table 4; its G-A entry, 1042 | 905, is Table 3's total at n = 6).
SEED_N6: MappingProxyType[tuple[str, str], tuple[str, int, int]] = MappingProxyType({
    ("forward", "cholesky"): ("Mata Table 4, Walker-Orin CRBA", 1627, 1261),
    ("forward", "recursive"): ("Mata Table 4, Featherstone ABA", 1533, 1415),
})


#: Kozłowski Table 2 (general axes), per recursion: row -> (multiplications, additions, divisions), each a
#: polynomial in n (None: "—" in the table).  Its printed total of additions is 264n − 411; the rows add up to
#: 224n − 411.
KOZLOWSKI_TABLE_2 = MappingProxyType({
    "b_k, n_k (3.7), (3.14)": ((74, -83), (44, -58), None),
    "state propagation (3.47)": ((6, -10), (12, -21), None),
    "inertia propagation (3.48)": ((56, -104), (22, -115), None),
    "Kalman gain (3.50)": (None, None, (5, -10)),
    "innovations (3.51)": (None, (1, 0), None),
    "residuals (3.53)": (None, None, (1, 0)),
    "state update (3.52)": ((46, -56), (39, -47), None),
    "inertia update (3.54)": ((55, -56), (85, -139), None),
    "costate propagation (3.56)": ((6, -10), (6, -10), None),
    "joint acceleration (3.57)": ((5, -2), (6, -3), None),
    "costate update (3.58)": ((16, -28), (9, -18), None),
})


def kozlowski_table_2(n: int = 6) -> list[dict]:
    """Kozłowski's Table 2 per recursion: our customized Kalman filter and smoother
    (:func:`robodyn.dynamics.spatial_operator.kozlowski_forward`) on the general robot, ``n`` joints; ``mul``
    includes the divisions, ``div`` counts them alone; ``published_mul`` is Kozłowski's multiplications plus
    divisions of the row."""
    from robodyn.symbolic.formulations import recorded_model

    phases = recorded_model(counting_robot(n), "kozlowski_forward").count_by_phase()

    def at(poly):
        return 0.0 if poly is None else float(np.polyval(poly, n))

    rows = []
    for name, (pm, pa, pd) in KOZLOWSKI_TABLE_2.items():
        c = phases.get(name, {"mul": 0, "add": 0, "div": 0})
        rows.append({"recursion": name, "robot": "general", "mul": c["mul"], "add": c["add"], "div": c["div"],
                     "published_mul": at(pm) + at(pd), "published_add": at(pa), "published_div": at(pd),
                     "published_mul_formula": format_polynomial(pm), "published_add_formula": format_polynomial(pa),
                     "published_div_formula": format_polynomial(pd),
                     "published": "Kozłowski Table 2", "note": _TABLE_2_NOTES.get(name, "")})
    return rows


_TABLE_2_NOTES = MappingProxyType({"inertia propagation (3.48)": "additions printed as 22n − 115; 62n − 115 makes "
                                   "the rows add up to the printed total 264n − 411 (docs/formulations.md §3)"})


#: Khalil & Dombre Table 9.5, "presented method" (customized symbolic Newton–Euler, base parameters, terminal
#: wrench, friction excluded): robot -> {variant: (mult, add)}.  "simplified": the matrices ^jJ_j diagonal and
#: two components of each first moment zero (footnote *).  TH8 is not a built-in robot of robodyn.
TABLE_9_5_PRESENTED = MappingProxyType({"general 6R (r1 = d1 = α1 = r6 = 0)": {"general": (425, 369)},
                                        "Stanford 2RP(3R)": {"general": (240, 227), "simplified": (142, 99)},
                                        "Stäubli RX-90": {"general": (253, 238), "simplified": (159, 113)}})
#: Table 9.5's column "2RP(3R) Stanford".
TABLE_9_5_STANFORD = MappingProxyType(TABLE_9_5_PRESENTED["Stanford 2RP(3R)"])


def _table_9_5_count(robot) -> tuple[int, int]:
    """(mul, add) of the customized inverse dynamics as Table 9.5 counts it: base parameters, geometric and
    inertial parameters as symbols, terminal wrench, no friction."""
    from robodyn.symbolic import customized_model

    c = customized_model(robot, "inverse_dynamics", parameters="base", symbolic_geometry=True,
                         symbolic_inertia=True, wrenches="terminal", friction=False).operation_count()
    return c["mul"], c["add"]


def stanford_table_9_5(robot: Robot | None = None, seed: int = 0) -> list[dict]:
    """Khalil & Dombre Table 9.5, Stanford column: the customized inverse dynamics (as Table 9.5 counts,
    :func:`_table_9_5_count`) of ``robot`` (default: the built-in ``stanford``) with three inertial variants:
    ``general`` (every inertial parameter non-zero, random), ``simplified`` (^jJ_j diagonal, the largest
    first-moment component of each link kept: footnote *) and ``built-in`` (the robot's own, no published figure);
    docs/studies.md §3.

    Returns
    -------
    list of dict with keys variant, mul, add, published_mul, published_add (None where none is published)
    """
    from robodyn.model.io import load

    robot = load("stanford") if robot is None else robot
    general = _general_inertias(np.random.default_rng(seed), robot.n)
    simplified = np.zeros_like(robot.params)
    for j, p in enumerate(robot.params):
        k = int(np.argmax(np.abs(p[6:9])))
        simplified[j, [0, 3, 5, 6 + k, 9]] = p[[0, 3, 5, 6 + k, 9]]
    rows = []
    for variant, params in (("general", general), ("simplified", simplified), ("built-in", robot.params)):
        m, a = _table_9_5_count(robot.replace(params=params))
        pm, pa = TABLE_9_5_STANFORD.get(variant, (None, None))
        rows.append({"variant": variant, "mul": m, "add": a, "published_mul": pm, "published_add": pa})
    return rows


# --- customized models of the other formulations, counted as their authors count -----------------------------
#: The robots of the customized counts (:func:`customized_report`), as stated in every row.
ROBOTS = MappingProxyType({
    "general": "general 6R: every α, d, r non-zero, full inertia tensors and first moments, gravity −z₀, no rotor "
               "inertia, no friction (counting_robot(6))",
    "PUMA-like": "PUMA 560 geometry (α ∈ {0, ±π/2}, its zero d and r) with the general 6R's full inertias",
    "PUMA 560": "built-in puma560 (Armstrong, Khatib & Burdick): its geometry and inertial parameters, their zeros "
                "included; rigid (rotor inertia and friction left out)",
})


def puma_like_robot(seed: int = 0) -> Robot:
    """The PUMA 560's geometry (built-in ``puma560``) with the full inertias of :func:`counting_robot` (6)."""
    from robodyn.model.io import load

    puma = load("puma560")
    general = counting_robot(6, seed=seed)
    return general.replace(name="puma_like", alpha=puma.alpha, d=puma.d, r=puma.r, theta=puma.theta,
                           gamma=puma.gamma, b=puma.b)


@dataclass(frozen=True)
class Published:
    """A published count: ``mul``/``add`` polynomial coefficients in n (highest power first) or, with
    ``n6_only``, the n = 6 figures; ``counts`` says what the authors count."""

    source: str
    mul: tuple
    add: tuple
    counts: str
    n6_only: bool = False
    div: tuple | None = None  # the divisions, where the paper counts them apart from ``mul`` (Kozłowski)

    def _mul(self, convention: str) -> tuple:
        if self.div is None or "mul" not in CONVENTIONS[convention].columns["div"]:
            return self.mul
        return _sum_polynomials(self.mul, self.div)

    def at(self, n: int, convention: str = "robodyn") -> tuple[float, float]:
        """(mul, add) at ``n``, the divisions in ``mul`` where ``convention`` counts them there."""
        mul = self._mul(convention)
        if self.n6_only:
            return float(mul[0]), float(self.add[0])
        return float(np.polyval(mul, n)), float(np.polyval(self.add, n))

    def text(self, op: str, convention: str = "robodyn") -> str:
        if self.n6_only:
            return "(n = 6 only)"
        return format_polynomial(self._mul(convention) if op == "mul" else getattr(self, op))


_MATA = "products and sums of the steps of Mata et al. §4 (sines and cosines not counted)"
_KOZ1 = "multiplications, additions/subtractions (Kozłowski §4.1; sines and cosines not counted)"
#: model (robodyn.symbolic.formulations.MODELS) -> [(published count for the general robot, for the PUMA-like
#: robot or None when the general figure is the one to compare with)].
CUSTOMIZED_PUBLISHED: MappingProxyType[str, list] = MappingProxyType({
    "newton_euler": [
        (Published("Mata et al. Table 1, Luh et al. N-E", (150, -48), (131, -48), _MATA), None),
        (Published("Khalil & Dombre Table 9.5, Luh et al. N-E", (137, -22), (101, -11),
                   "multiplications, additions (Khalil & Dombre Table 9.5)"), None),
        (Published("Kozłowski §4.1, Khosla's customized N-E", (678,), (521,), _KOZ1, True),
         Published("Kozłowski §4.1, Khosla's N-E, parallel/perpendicular axes", (500,), (403,), _KOZ1, True)),
    ],
    "gibbs_appell_inverse": [(Published("Mata et al. Table 1, G-A", (96, -101), (84, -100), _MATA), None)],
    "gibbs_appell_bias": [(Published("Mata et al. Table 3, bias vector", (96, -108), (83, -105), _MATA), None)],
    "gibbs_appell_inertia": [
        (Published("Mata et al. Table 2, G-A", (11.5, 19.5, -49), (8.5, 31.5, -69), _MATA), None)],
    "crba_inertia": [
        (Published("Mata et al. Table 2, Walker & Orin CRBA", (12, 56, -27), (7, 67, -56), _MATA), None)],
    "gibbs_appell_forward": [
        (Published("Mata et al. Tables 3-4, G-A total", (1 / 6, 13, 695 / 6, -157), (1 / 6, 10, 683 / 6, -174),
                   _MATA + "; Cholesky n³/6 + n²/2 + n/3 each, solve n² and n² − n"), None)],
    "crba_forward": [(Published("Mata et al. Table 4, Walker & Orin CRBA", (1627,), (1261,), _MATA, True), None)],
    "aba": [(Published("Mata et al. Table 4, Featherstone ABA", (1533,), (1415,), _MATA, True), None)],
    "kozlowski_inverse": [
        (Published("Kozłowski Table 1, general axes", (142, -151), (109, -134), _KOZ1),
         Published("Kozłowski Table 1, parallel/perpendicular axes", (106, -113), (89, -102), _KOZ1))],
    "kozlowski_forward": [
        (Published("Kozłowski Table 2, multiplications + divisions", (264, -349), (264, -411),
                   "multiplications 264n − 349 plus divisions 6n − 10 (counted as multiplications except under "
                   "Kozłowski's convention); additions/subtractions 264n − 411 as printed (its rows add up to "
                   "224n − 411)", div=(6, -10)), None)],
})

#: Kozłowski Table 1, per recursion: row -> ((mul, add) general axes, (mul, add) parallel/perpendicular axes).
KOZLOWSKI_TABLE_1 = MappingProxyType({
    "b_k, n_k (3.7), (3.14)": (((74, -83), (44, -58)), ((58, -66), (36, -42))),
    "costate propagation (3.10)": (((6, -10), (6, -10)), ((4, -6), (4, -6))),
    "costate update (3.11)": (((16, -11), (15, -15)), ((8, -6), (11, -11))),
    "state propagation (3.8), (3.12)": (((30, -31), (36, -43)), ((28, -27), (34, -39))),
    "state update (3.9)": (((16, -16), (8, -8)), ((8, -8), (4, -4))),
})


def program_count(program, convention: str = "robodyn") -> dict:
    """The operation count of a recorded :class:`robodyn.dynamics.trace.Recorded` (the assignments that reach
    its outputs) under the counting ``convention`` (:data:`CONVENTIONS`)."""
    return counting_convention(convention).count(program.graph.ops[k][0] for k in program.reachable())


def customized_fit(model: str, n_max: int = 8, convention: str = "robodyn") -> tuple[tuple | None, tuple | None, int]:
    """Exact polynomials (mul, add) in n of the customized ``model`` on :func:`counting_robot` (n, seed=n) for
    n = 1..n_max under ``convention``, and the n from which they hold (as :meth:`MethodCount.fit`)."""
    from robodyn.symbolic.formulations import recorded_model

    counts = [program_count(recorded_model(counting_robot(n, seed=n), model), convention)
              for n in range(1, n_max + 1)]
    (mul, add), n0 = _exact_fits(np.arange(1, n_max + 1), [[c[op] for c in counts] for op in ("mul", "add")])
    return mul, add, n0


def customized_report(n_fit: int = 8, convention: str = "robodyn") -> list[dict]:
    """Customized models of every formulation counted next to the published figures (n = 6): one row per model
    of :data:`robodyn.symbolic.formulations.MODELS` with a published count and robot of :data:`ROBOTS`, our counts
    and exact polynomial in n (general robot, n = 1..``n_fit``) under ``convention`` (:data:`CONVENTIONS`), the
    published figure, the rule it follows, and whether ours is at or below it.

    Returns
    -------
    list of dict with keys model, formulation, robot, robot_description, mul, add, sin, cos, ours_mul_formula,
    ours_add_formula, published, published_mul, published_add, published_mul_formula, published_add_formula,
    published_counts, published_rule, convention, at_or_below.
    """
    from robodyn.symbolic.formulations import MODELS, recorded_model

    from robodyn.model.io import load

    rule = counting_convention(convention).name
    robots = {"general": counting_robot(6), "PUMA-like": puma_like_robot(), "PUMA 560": load("puma560")}
    rows = []
    for model, refs in CUSTOMIZED_PUBLISHED.items():
        fm, fa, n0 = customized_fit(model, n_fit, rule) if n_fit else (None, None, 0)
        for label, robot in robots.items():
            c = program_count(recorded_model(robot, model), rule)
            for general_ref, special_ref in refs:
                ref = special_ref if (label != "general" and special_ref is not None) else general_ref
                pm, pa = ref.at(6, rule)
                rows.append({
                    "model": model, "formulation": MODELS[model][0], "robot": label,
                    "robot_description": ROBOTS[label], "mul": c["mul"], "add": c["add"], "sin": c["sin"],
                    "cos": c["cos"],
                    "ours_mul_formula": (format_polynomial(fm) + f" (n ≥ {n0})") if label == "general" and fm else None,
                    "ours_add_formula": (format_polynomial(fa) + f" (n ≥ {n0})") if label == "general" and fa else None,
                    "published": ref.source, "published_mul": pm, "published_add": pa,
                    "published_mul_formula": ref.text("mul", rule), "published_add_formula": ref.text("add", rule),
                    "published_counts": ref.counts, "published_rule": _paper_rule(ref.source), "convention": rule,
                    "at_or_below": bool(c["mul"] <= pm and c["add"] <= pa),
                })
    return rows


def kozlowski_table_1(n: int = 6) -> list[dict]:
    """Kozłowski's Table 1 per recursion: our customized (3.24)–(3.33) (:func:`robodyn.dynamics.spatial_operator.
    kozlowski_torques`), each operation attributed to the recursion that makes it, on the general robot (against
    the general-axes columns) and the PUMA-like robot (against the parallel/perpendicular columns), at ``n``
    joints (the PUMA-like robot has 6)."""
    from robodyn.symbolic.formulations import recorded_model

    rows = []
    for label, robot, col in (("general", counting_robot(n), 0), ("PUMA-like", puma_like_robot(), 1)):
        phases = recorded_model(robot, "kozlowski_inverse").count_by_phase()
        nn = robot.n
        for name, cols in KOZLOWSKI_TABLE_1.items():
            (pm, pa) = cols[col]
            c = phases.get(name, {"mul": 0, "add": 0})
            rows.append({"recursion": name, "robot": label, "mul": c["mul"], "add": c["add"],
                         "published_mul": float(np.polyval(pm, nn)), "published_add": float(np.polyval(pa, nn)),
                         "published_mul_formula": format_polynomial(pm), "published_add_formula": format_polynomial(pa),
                         "published": "Kozłowski Table 1, " + ("general axes" if col == 0 else
                                                                "parallel/perpendicular axes")})
    return rows


def _general_inertias(rng, n):
    out = []
    for _ in range(n):
        R = rot_z(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3)) @ rot_z(rng.uniform(-3, 3))
        a, b, c = rng.uniform(0.01, 0.5, 3)
        out.append(standard_from_com(rng.uniform(0.5, 5), rng.uniform(0.05, 0.3, 3), R @ np.diag([a + b, b + c, a + c]) @ R.T))
    return np.array(out)


def table_9_5(seed: int = 0) -> list[dict]:
    """Khalil & Dombre Table 9.5, "presented method" rows that robodyn's robots allow: robodyn's customized
    Newton–Euler model (docs/symbolic.md: base parameters, geometric and inertial parameters as symbols, terminal
    wrench, rotor inertias, no friction) of the general 6R robot of §9.6.3 (r1 = d1 = α1 = r6 = 0), the Stanford
    arm (:func:`stanford_table_9_5`) and the RX-90 (general full inertias; simplified: built-in
    ``rx90_simplified``, Example 9.3).  Returns dicts with keys robot, variant, mul, add, published_mul,
    published_add."""
    from robodyn.model.io import load

    rng = np.random.default_rng(seed)
    general = Robot(name="general6R", sigma=np.zeros(6, int), alpha=np.r_[0, rng.uniform(0.2, 1.2, 5)],
                    d=np.r_[0, rng.uniform(0.1, 0.5, 5)], r=np.r_[0, rng.uniform(0.1, 0.5, 4), 0],
                    params=_general_inertias(rng, 6), Ia=np.full(6, 0.1))
    rx90 = load("rx90")
    rx90_general = rx90.replace(params=_general_inertias(rng, 6), Fc=None, Fv=None, Foff=None, Fst=None)
    rows = []
    for robot_name, variant, robot in (("general 6R (r1 = d1 = α1 = r6 = 0)", "general", general),
                                       ("Stäubli RX-90", "general", rx90_general),
                                       ("Stäubli RX-90", "simplified", load("rx90_simplified"))):
        m, a = _table_9_5_count(robot)
        pm, pa = TABLE_9_5_PRESENTED[robot_name][variant]
        rows.append({"robot": robot_name, "variant": variant, "mul": m, "add": a, "published_mul": pm, "published_add": pa})
    return rows + [{"robot": "Stanford 2RP(3R)", **r} for r in stanford_table_9_5()]


def fit_polynomial(ns, counts, max_degree: int = 3) -> tuple[Fraction, ...] | None:
    """Lowest-degree polynomial with coefficients in (1/6)ℤ that reproduces ``counts`` EXACTLY at ``ns``
    (highest power first), or None (needs at least degree + 2 points so that the fit is a check)."""
    ns = np.asarray(ns)
    counts = np.asarray(counts, dtype=float)
    for deg in range(max_degree + 1):
        if len(ns) < deg + 2:
            return None
        coef = np.polyfit(ns, counts, deg)
        frac = tuple(Fraction(round(c * 6), 6) for c in coef)
        if all(sum(c * int(n) ** (deg - k) for k, c in enumerate(frac)) == int(y) for n, y in zip(ns, counts)):
            return frac
    return None


def format_polynomial(coef) -> str:
    """'12n² + 56n − 27' from coefficients (highest power first)."""
    if coef is None:
        return "—"
    text = ""  # " + 12n² + 56n − 27"
    for p, raw in zip(range(len(coef) - 1, -1, -1), coef):
        if raw == 0:
            continue
        c = Fraction(raw).limit_denominator(6)
        mag = abs(c)
        num = "" if mag == 1 and p else str(mag) if mag.denominator == 1 or p == 0 else f"({mag})"
        power = "" if p == 0 else "n" + {1: "", 2: "²", 3: "³"}.get(p, f"^{p}")
        text += f" {'−' if c < 0 else '+'} {num}{power}"
    if not text:
        return "0"
    return text[3:] if text[1] == "+" else "−" + text[3:]


@dataclass(frozen=True)
class MethodCount:
    """Counts of one (kind, method) for n = 1..n_max."""

    kind: str
    method: str
    ns: tuple[int, ...]
    tallies: tuple[Tally, ...]
    max_error: float  # max |traced − float| result difference (the counting must not change the numbers)
    error: str = ""  # why it could not be counted, if it could not

    def series(self, op: str, convention: str = "robodyn") -> np.ndarray:
        """The count ``op`` for each n, under the counting ``convention`` (:data:`CONVENTIONS`)."""
        if convention == "robodyn":
            return np.array([getattr(t, op) for t in self.tallies])
        rule = CONVENTIONS[convention]
        return np.array([rule.count(t.ops)[op] for t in self.tallies])

    def fit(self, op: str, convention: str = "robodyn") -> tuple[tuple[Fraction, ...] | None, int]:
        """Exact polynomial in n of the counts and the n from which it holds: ``(coefficients, n0)``.

        Small n are boundary cases of the recursions (n = 1: A is constant, nothing to factor), so the fit
        starts at n0 = 2, else 3, else 4, as long as at least degree + 2 points remain to check it.
        """
        (coef,), n0 = _exact_fits(self.ns, [self.series(op, convention)])
        return coef, n0


def _exact_fits(ns, series) -> tuple[list, int]:
    """:func:`fit_polynomial` of every count series from the first n0 in (2, 3, 4) where all of them fit."""
    ns = np.asarray(ns)
    for n0 in (2, 3, 4):
        keep = ns >= n0
        fits = [fit_polynomial(ns[keep], np.asarray(y)[keep]) for y in series]
        if all(f is not None for f in fits):
            return fits, n0
    return [None] * len(series), 0


@dataclass(frozen=True)
class OpcountReport:
    """The counts of :func:`opcount_report`; ``convention``: the counting rule of :meth:`rows`
    (:data:`CONVENTIONS`)."""

    n_max: int
    counts: tuple[MethodCount, ...] = field(default_factory=tuple)
    convention: str = "robodyn"

    def rows(self) -> list[list[str]]:
        """Two rows (mult, add) per (method, published count): our exact fit and value at n = 6 under the
        report's convention, the published formula and value at n = 6 (divisions moved where the convention
        counts them, when the paper gives them apart), the difference ours − published at n = 6, and the
        counting rule the published figure follows (a key of :data:`CONVENTIONS`)."""
        conv = self.convention
        rows = []
        for c in self.counts:
            name = f"{c.kind} {c.method}"
            if c.error:
                rows.append([name, "", "not counted: " + c.error, "", "", "", "", ""])
                continue
            at6 = dict(zip(c.ns, c.tallies)).get(6)
            at6 = CONVENTIONS[conv].count(at6.ops) if at6 else None
            refs = [f.for_convention(conv) for f in SEED_FORMULAS.get((c.kind, c.method), [])]
            if (c.kind, c.method) in SEED_N6:
                src, pm, pa = SEED_N6[(c.kind, c.method)]
                refs.append((src + " (n = 6 only)", pm, pa))
            if not refs:
                refs = [("(no published count)", None, None)]
            for src, *seed in refs:
                rule = _paper_rule(src)
                for op, ref in zip(("mul", "add"), seed):
                    coef, n0 = c.fit(op, conv)
                    ours6 = at6[op] if at6 else None
                    if isinstance(ref, tuple):
                        seed6, seed_text = float(np.polyval(ref, 6)), format_polynomial(ref)
                    else:
                        seed6, seed_text = ref, "—"
                    rows.append([
                        name, op, format_polynomial(coef) + (f" (n ≥ {n0})" if coef is not None else ""),
                        "—" if ours6 is None else str(ours6), src, seed_text,
                        "—" if seed6 is None else f"{seed6:g}",
                        "—" if seed6 is None or ours6 is None else f"{ours6 - seed6:+g}", rule,
                    ])
        return rows

    HEADER = ("method", "op", "ours (exact fit)", "ours n=6", "published", "published formula", "published n=6",
              "ours − published n=6", "published rule")


def _paper_rule(source: str) -> str:
    """The key of :data:`CONVENTIONS` whose rule a published figure follows, from its source text."""
    for key, word in (("khalil_dombre", "khalil"), ("mata", "mata"), ("kozlowski", "koz")):
        if word in source.lower():
            return key
    return "—"


def opcount_report(n_max: int = 8, kinds=("inverse", "inertia", "forward"), methods=None,
                   progress=None, convention: str = "robodyn") -> OpcountReport:
    """Count every installed method of each kind for n = 1..n_max on :func:`counting_robot` arms.

    Parameters
    ----------
    n_max : int ≥ 1
    kinds : subset of ("inverse_dynamics", "inertia_matrix", "forward_dynamics") (or their short names
        "inverse", "inertia", "forward", which label the counts)
    methods : sequence of str, optional — restrict to these method names (each must be a method of some kind)
    progress : callable(str), optional — called before each (kind, method)
    convention : "robodyn" (default) | "khalil_dombre" | "mata" | "kozlowski"
        The counting rule of the report's comparison rows (:data:`CONVENTIONS`: each paper's rule, in its
        words); the tallies of ``counts`` are robodyn's, ``MethodCount.series(op, convention)`` gives any other.

    Returns
    -------
    OpcountReport
    """
    from robodyn.analysis.accuracy import available_methods

    if isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 1:
        raise InputError(f"n_max = {n_max!r}; give an integer >= 1")
    rule = counting_convention(convention)
    kinds = [counted_kind(k) for k in kinds]
    known = [m for kind in kinds for m in available_methods(kind)]
    unknown = [m for m in (methods or ()) if m not in known]
    if unknown:
        raise InputError(f"methods: unknown method(s) {', '.join(map(repr, unknown))}; choose from "
                         f"{', '.join(dict.fromkeys(known))}")
    robots = [counting_robot(n, seed=n) for n in range(1, n_max + 1)]
    out = []
    for kind in kinds:
        for m in available_methods(kind):
            if methods is not None and m not in methods:
                continue
            if progress:
                progress(f"{kind} {m}")
            tallies, err = [], 0.0
            try:
                for r in robots:
                    t, traced, ref = count_operations(r, kind, m)
                    err = max(err, float(np.max(np.abs(traced - ref), initial=0.0)))
                    tallies.append(t)
                out.append(MethodCount(kind, m, tuple(range(1, n_max + 1)), tuple(tallies), err))
            except Exception as exc:  # noqa: BLE001 — a method that cannot run on object arrays is reported
                out.append(MethodCount(kind, m, (), (), float("nan"), error=f"{type(exc).__name__}: {exc}"))
    return OpcountReport(n_max=n_max, counts=tuple(out), convention=rule.name)


__all__ = (
    "Tally", "Traced", "counting", "traced_array", "values",  # re-exported from robodyn.analysis.traced
    "Convention", "CONVENTIONS", "counting_convention", "program_count", "COUNTED_KINDS", "counted_kind",
    "counting_robot", "count_operations", "Formula", "SEED_FORMULAS", "SEED_N6", "TABLE_9_5_STANFORD",
    "stanford_table_9_5", "fit_polynomial", "format_polynomial",
    "MethodCount", "OpcountReport", "opcount_report",
    "ROBOTS", "puma_like_robot", "Published", "CUSTOMIZED_PUBLISHED", "KOZLOWSKI_TABLE_1", "customized_fit",
    "customized_report", "kozlowski_table_1", "KOZLOWSKI_TABLE_2", "kozlowski_table_2", "TABLE_9_5_PRESENTED",
    "table_9_5",
)
