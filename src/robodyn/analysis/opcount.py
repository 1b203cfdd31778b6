"""Operation counts of the dynamics algorithms, measured by running ONE scalar evaluation on counting scalars.

Every joint input is a :class:`~robodyn.analysis.traced.Traced` number (an object array of them goes through the
same batched NumPy code as float arrays); the counting rules are in :mod:`robodyn.analysis.traced`.

The counting robots (:func:`counting_robot`) are general serial arms with revolute joints only (the published
"worst case"): random non-special twist angles α and lengths d, r, full inertia tensors and first moments,
θ offsets 0 (an offset only shifts q), no rotor inertia and no friction (the published models have neither),
gravity along −z_0.  The counts depend on that structure only, never on the random values.
"""

from __future__ import annotations

from types import MappingProxyType
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import import_module

import numpy as np

from robodyn.analysis.traced import Tally, Traced, counting, traced_array, values
from robodyn.dynamics import api
from robodyn.errors import InputError
from robodyn.model.inertia import standard_from_com
from robodyn.model.robot import Robot
from robodyn.spatial import rot_x, rot_z


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
    "inverse": (api._INVERSE, "inverse_dynamics", ("q", "qd", "qdd")),
    "inertia": (api._INERTIA, "inertia_matrix", ("q",)),
    "forward": (api._FORWARD, "forward_dynamics", ("q", "qd", "tau")),
})


def count_operations(robot: Robot, kind: str, method: str, seed: int = 1) -> tuple[Tally, np.ndarray, np.ndarray]:
    """Count one scalar evaluation of ``rd.<kind function>(robot, ..., method=method)``.

    Returns
    -------
    tally : Tally
    traced_result : ndarray of float, the counted evaluation's values
    float_result : ndarray, the same call on float64 inputs (they must agree: the counting changes nothing)
    """
    if kind not in _KINDS:
        raise InputError(f"kind = {kind!r}; choose one of {', '.join(_KINDS)}")
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
    """A published operation count: mul(n), add(n) as polynomial coefficients (highest power first)."""

    source: str
    mul: tuple
    add: tuple | None = None

    def at(self, n: int) -> tuple[float, float | None]:
        m = float(np.polyval(self.mul, n))
        return m, (None if self.add is None else float(np.polyval(self.add, n)))


#: Published formulas compared with each (kind, method).  Divisions are counted as multiplications everywhere.
SEED_FORMULAS: MappingProxyType[tuple[str, str], list[Formula]] = MappingProxyType({
    ("inverse", "newton_euler"): [
        Formula("Khalil Table 9.5, Luh et al. N-E", (137, -22), (101, -11)),
        Formula("Mata Table 1, Luh et al. N-E", (150, -48), (131, -48)),
        Formula("Khalil Table 9.5, customized symbolic N-E", (92, -127), (81, -117)),
    ],
    ("inverse", "gibbs_appell"): [Formula("Mata Table 1, G-A", (96, -101), (84, -100))],
    ("inverse", "spatial_operator"): [Formula("Kozlowski Table 1, general axes", (142, -151), (109, -134))],
    ("inertia", "composite"): [Formula("Mata Table 2, Walker-Orin CRBA", (12, 56, -27), (7, 67, -56))],
    ("inertia", "gibbs_appell"): [Formula("Mata Table 2, G-A", (11.5, 19.5, -49), (8.5, 31.5, -69))],
    ("forward", "gibbs_appell"): [
        Formula("Mata Table 3, G-A total", (1 / 6, 13, 695 / 6, -157), (1 / 6, 10, 683 / 6, -174)),
    ],
    ("forward", "spatial_operator"): [
        Formula("Kozlowski Table 2, filter+smoother (mult + 6n-10 div)", (270, -359), (264, -411)),
    ],
})
#: Published totals for n = 6 only (Mata Table 4; its G-A entry, 1042 | 905, is Table 3's total at n = 6).
SEED_N6: MappingProxyType[tuple[str, str], tuple[str, int, int]] = MappingProxyType({
    ("forward", "cholesky"): ("Mata Table 4, Walker-Orin CRBA", 1627, 1261),
    ("forward", "recursive"): ("Mata Table 4, Featherstone ABA", 1533, 1415),
})


#: Khalil & Dombre Table 9.5, "presented method" (customized symbolic Newton–Euler with the base inertial
#: parameters, terminal-link wrench included, friction excluded), column "2RP(3R) Stanford": (mult, add).
#: "simplified": the matrices ^jJ_j diagonal and two components of each first moment zero (footnote *).
TABLE_9_5_STANFORD = MappingProxyType({"general": (240, 227), "simplified": (142, 99)})


def stanford_table_9_5(robot: Robot | None = None, seed: int = 0) -> list[dict]:
    """Khalil & Dombre Table 9.5, Stanford column: customized inverse dynamics of the Stanford arm, counted.

    Three inertial variants on the geometry of ``robot`` (default: the built-in ``stanford``), each the
    customized symbolic model of Khalil & Dombre §9.6 with base parameters, the geometric and inertial
    parameters as symbols that are zero where the variant's parameters are zero, the terminal-link wrench
    included and friction excluded, as Table 9.5 counts:

    * ``general``: every inertial parameter non-zero (full ^jJ_j, three first-moment components; physically
      consistent random values; the count depends only on which parameters are zero);
    * ``simplified``: ^jJ_j diagonal and two first-moment components zero (Table 9.5, footnote *): the
      diagonal of the robot's own ^jJ_j and, per link, its largest first-moment component;
    * ``built-in``: the robot's own parameters (no published figure).

    Returns
    -------
    list of dict with keys variant, mul, add, published_mul, published_add (None where none is published)
    """
    from robodyn.model.io import load
    from robodyn.symbolic import customized_model

    robot = load("stanford") if robot is None else robot
    rng = np.random.default_rng(seed)
    general = []
    for _ in range(robot.n):
        R = rot_z(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3)) @ rot_z(rng.uniform(-3, 3))
        a, b, c = rng.uniform(0.01, 0.5, 3)
        inertia_com = R @ np.diag([a + b, b + c, a + c]) @ R.T
        general.append(standard_from_com(rng.uniform(0.5, 5), rng.uniform(0.05, 0.3, 3), inertia_com))
    simplified = np.zeros_like(robot.params)
    for j, p in enumerate(robot.params):
        k = int(np.argmax(np.abs(p[6:9])))
        simplified[j, [0, 3, 5, 6 + k, 9]] = p[[0, 3, 5, 6 + k, 9]]
    rows = []
    for variant, params in (("general", np.array(general)), ("simplified", simplified), ("built-in", robot.params)):
        model = customized_model(robot.replace(params=params), "inverse_dynamics", parameters="base",
                                 symbolic_geometry=True, symbolic_inertia=True, wrenches="terminal", friction=False)
        count = model.operation_count()
        published = TABLE_9_5_STANFORD.get(variant, (None, None))
        rows.append({"variant": variant, "mul": count["mul"], "add": count["add"],
                     "published_mul": published[0], "published_add": published[1]})
    return rows


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
    deg = len(coef) - 1
    sup = {2: "²", 3: "³"}
    parts = []
    for k, c in enumerate(coef):
        p = deg - k
        if c == 0:
            continue
        c = Fraction(c).limit_denominator(6)
        mag = abs(c)
        if mag.denominator == 1:
            num = str(mag) if (mag != 1 or p == 0) else ""
        else:
            num = f"{mag.numerator}/{mag.denominator}" if p == 0 else f"({mag.numerator}/{mag.denominator})"
        term = num + ("" if p == 0 else "n" + sup.get(p, "" if p == 1 else f"^{p}"))
        parts.append(("−" if c < 0 else "+", term))
    if not parts:
        return "0"
    text = ("−" if parts[0][0] == "−" else "") + parts[0][1]
    return text + "".join(f" {s} {t}" for s, t in parts[1:])


@dataclass(frozen=True)
class MethodCount:
    """Counts of one (kind, method) for n = 1..n_max."""

    kind: str
    method: str
    ns: tuple[int, ...]
    tallies: tuple[Tally, ...]
    max_error: float  # max |traced − float| result difference (the counting must not change the numbers)
    error: str = ""  # why it could not be counted, if it could not

    def series(self, op: str) -> np.ndarray:
        return np.array([getattr(t, op) for t in self.tallies])

    def fit(self, op: str) -> tuple[tuple[Fraction, ...] | None, int]:
        """Exact polynomial in n of the counts and the n from which it holds: ``(coefficients, n0)``.

        Small n are boundary cases of the recursions (n = 1: A is constant, nothing to factor), so the fit
        starts at n0 = 2, else 3, else 4, as long as at least degree + 2 points remain to check it.
        """
        ns = np.array(self.ns)
        for n0 in (2, 3, 4):
            keep = ns >= n0
            coef = fit_polynomial(ns[keep], self.series(op)[keep])
            if coef is not None:
                return coef, n0
        return None, 0


@dataclass(frozen=True)
class OpcountReport:
    n_max: int
    counts: tuple[MethodCount, ...] = field(default_factory=tuple)

    def rows(self) -> list[list[str]]:
        """Two rows (mult, add) per (method, published count): our exact fit and value at n = 6, the published
        formula and value at n = 6, and the difference ours − published at n = 6."""
        rows = []
        for c in self.counts:
            name = f"{c.kind} {c.method}"
            if c.error:
                rows.append([name, "", "not counted: " + c.error, "", "", "", "", ""])
                continue
            at6 = dict(zip(c.ns, c.tallies)).get(6)
            refs = [(f.source, f.mul, f.add) for f in SEED_FORMULAS.get((c.kind, c.method), [])]
            if (c.kind, c.method) in SEED_N6:
                src, pm, pa = SEED_N6[(c.kind, c.method)]
                refs.append((src + " (n = 6 only)", pm, pa))
            if not refs:
                refs = [("(no published count)", None, None)]
            for src, *seed in refs:
                for op, ref in zip(("mul", "add"), seed):
                    coef, n0 = c.fit(op)
                    ours6 = getattr(at6, op) if at6 else None
                    if isinstance(ref, tuple):
                        seed6, seed_text = float(np.polyval(ref, 6)), format_polynomial(ref)
                    else:
                        seed6, seed_text = ref, "—"
                    rows.append([
                        name, op, format_polynomial(coef) + (f" (n ≥ {n0})" if coef is not None else ""),
                        "—" if ours6 is None else str(ours6), src, seed_text,
                        "—" if seed6 is None else f"{seed6:g}",
                        "—" if seed6 is None or ours6 is None else f"{ours6 - seed6:+g}",
                    ])
        return rows

    HEADER = ("method", "op", "ours (exact fit)", "ours n=6", "published", "published formula", "published n=6", "ours − published n=6")


def opcount_report(n_max: int = 8, kinds=("inverse", "inertia", "forward"), methods=None,
                   progress=None) -> OpcountReport:
    """Count every installed method of each kind for n = 1..n_max on :func:`counting_robot` arms.

    Parameters
    ----------
    n_max : int ≥ 1
    kinds : subset of ("inverse", "inertia", "forward")
    methods : sequence of str, optional — restrict to these method names (each must be a method of some kind)
    progress : callable(str), optional — called before each (kind, method)

    Returns
    -------
    OpcountReport
    """
    from robodyn.analysis.accuracy import available_methods

    if isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 1:
        raise InputError(f"n_max = {n_max!r}; give an integer >= 1")
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
    return OpcountReport(n_max=n_max, counts=tuple(out))


__all__ = (
    "Tally", "Traced", "counting", "traced_array", "values",  # re-exported from robodyn.analysis.traced
    "counting_robot", "count_operations", "Formula", "SEED_FORMULAS", "SEED_N6", "TABLE_9_5_STANFORD",
    "stanford_table_9_5", "fit_polynomial", "format_polynomial",
    "MethodCount", "OpcountReport", "opcount_report",
)
