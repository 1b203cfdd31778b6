"""Operation counts of the dynamics algorithms, measured by running ONE scalar evaluation on counting scalars.

Every joint input is a :class:`Traced` number (an object array of them goes through the same batched NumPy
code as float arrays).  Each arithmetic operation between two state-dependent values adds to a tally:

* ``mul``: multiplications and divisions (x**2 counts one multiplication);
* ``add``: additions and subtractions;
* ``sin``/``cos``: calls of those functions, ``sqrt``: square roots (Cholesky), ``other``: anything else.

Conventions (stated so the numbers can be compared with hand counts):

* Operations between constants of the robot (plain Python numbers) are not counted: they can be done
  off-line, as every seed assumes.
* An operation with an exact constant 0 or ±1 is not counted and folds to its result (x·0 = 0, x·1 = x,
  x + 0 = x, x·(−1) = −x): the structural zeros of rotation matrices, joint axes z = [0, 0, 1], zero initial
  velocities, etc., cost nothing, as in a customized or hand-optimised implementation.  Negation is free.
* Operations on a (state-dependent) constant that happens to be non-zero are counted.

The counting robots (:func:`counting_robot`) are general serial arms with revolute joints only (the seeds'
"worst case"): random non-special twist angles α and lengths d, r, full inertia tensors and first moments,
θ offsets 0 (an offset only shifts q), no rotor inertia and no friction (the seeds' models have neither),
gravity along −z_0.  The counts depend on that structure only, never on the random values.
"""

from __future__ import annotations

import math
import numbers
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import import_module
from importlib import util as import_util

import numpy as np

from robodyn import _arrays
from robodyn.dynamics import api
from robodyn.errors import InputError
from robodyn.model.inertia import standard_from_com
from robodyn.model.robot import Robot
from robodyn.spatial import rot_x, rot_z


@dataclass
class Tally:
    """Numbers of operations counted in one evaluation."""

    mul: int = 0
    add: int = 0
    sin: int = 0
    cos: int = 0
    sqrt: int = 0
    other: int = 0


_STACK: list[Tally] = []


def _count(kind: str) -> None:
    if _STACK:
        setattr(_STACK[-1], kind, getattr(_STACK[-1], kind) + 1)


#: Constants closer than this to 0 or ±1 are taken as exactly 0 or ±1: they are structural zeros/ones left
#: inexact by round-off in constant sub-expressions (e.g. the articulated inertia K_j a_j = 0 of the last link).
_CONST_TOL = 1e-12


def _is_const(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Traced)


def _is(x, target: int) -> bool:
    """x is a plain constant equal to ``target`` (0, 1 or −1) up to round-off."""
    return _is_const(x) and abs(x - target) < _CONST_TOL


def _value(x) -> float:
    return x.v if isinstance(x, Traced) else x


class Traced:
    """A float that counts the arithmetic done on it (see the module docstring for the rules)."""

    __slots__ = ("v",)

    def __init__(self, value: float):
        self.v = float(value)

    def __repr__(self) -> str:
        return f"Traced({self.v!r})"

    # --- additions -------------------------------------------------------------------------------------
    def __add__(self, o):
        if _is(o, 0):
            return self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("add")
        return Traced(self.v + _value(o))

    __radd__ = __add__

    def __sub__(self, o):
        if _is(o, 0):
            return self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("add")
        return Traced(self.v - _value(o))

    def __rsub__(self, o):
        if _is(o, 0):
            return -self
        if not isinstance(o, numbers.Number):
            return NotImplemented
        _count("add")
        return Traced(o - self.v)

    # --- multiplications -------------------------------------------------------------------------------
    def __mul__(self, o):
        if _is(o, 0):
            return 0
        if _is(o, 1):
            return self
        if _is(o, -1):
            return -self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("mul")
        return Traced(self.v * _value(o))

    __rmul__ = __mul__

    def __truediv__(self, o):
        if _is(o, 1) or _is(o, -1):
            return self if _is(o, 1) else -self
        if not isinstance(o, (Traced, numbers.Number)):
            return NotImplemented
        _count("mul")
        return Traced(self.v / _value(o))

    def __rtruediv__(self, o):
        if not isinstance(o, numbers.Number):
            return NotImplemented
        if _is(o, 0):
            return 0
        _count("mul")
        return Traced(o / self.v)

    def __pow__(self, p):
        if p == 2:
            _count("mul")
            return Traced(self.v * self.v)
        _count("other")
        return Traced(self.v ** _value(p))

    # --- free operations -------------------------------------------------------------------------------
    def __neg__(self):
        return Traced(-self.v)

    def __pos__(self):
        return self

    def __abs__(self):
        return Traced(abs(self.v))

    def __float__(self):
        return self.v

    def __eq__(self, o):
        return self.v == _value(o)

    def __ne__(self, o):
        return self.v != _value(o)

    def __lt__(self, o):
        return self.v < _value(o)

    def __le__(self, o):
        return self.v <= _value(o)

    def __gt__(self, o):
        return self.v > _value(o)

    def __ge__(self, o):
        return self.v >= _value(o)

    __hash__ = None

    # --- functions called by NumPy ufuncs on object arrays --------------------------------------------
    def sin(self):
        _count("sin")
        return Traced(math.sin(self.v))

    def cos(self):
        _count("cos")
        return Traced(math.cos(self.v))

    def sqrt(self):
        _count("sqrt")
        return Traced(math.sqrt(self.v))

    def exp(self):
        _count("other")
        return Traced(math.exp(self.v))

    def sign(self):
        return (self.v > 0) - (self.v < 0)


def traced_array(values) -> np.ndarray:
    """Object array of :class:`Traced` numbers with the values (and shape) of ``values``."""
    a = np.asarray(values, dtype=float)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = Traced(a[idx])
    return out


def values(a) -> np.ndarray:
    """Float array of the values of an array of Traced numbers / plain numbers."""
    a = np.asarray(a, dtype=object)
    return np.vectorize(lambda x: float(_value(x)), otypes=[float])(a) if a.size else np.zeros(a.shape)


# --- letting object arrays through the argument checks while counting -------------------------------------
_ORIGINAL = {"joint_arrays": _arrays.joint_arrays, "check_array": _arrays.check_array}


def _joint_arrays(robot, **arrays):
    given = {k: np.asarray(v) for k, v in arrays.items() if v is not None}
    if not any(a.dtype == object for a in given.values()):
        return _ORIGINAL["joint_arrays"](robot, **arrays)
    for name, a in given.items():
        if a.ndim == 0 or a.shape[-1] != robot.n:
            raise InputError(f"argument '{name}' has shape {a.shape}; expected (..., {robot.n})")
    batch = np.broadcast_shapes(*(a.shape[:-1] for a in given.values()))
    out = {k: None if v is None else np.broadcast_to(np.asarray(v).astype(object), batch + (robot.n,))
           for k, v in arrays.items()}
    return np.dtype(object), batch, out


def _check_array(name, value, shape_tail, batch, dtype):
    if np.dtype(dtype) != object:
        return _ORIGINAL["check_array"](name, value, shape_tail, batch, dtype)
    return np.broadcast_to(np.asarray(value).astype(object), tuple(batch) + tuple(shape_tail))


def _cholesky(A):
    """Textbook Cholesky A = L Lᵀ on object arrays (one matrix), so that its operations are counted."""
    A = np.asarray(A)
    if A.dtype != object:
        return _ORIGINAL["cholesky"](A)
    n = A.shape[-1]
    L = np.zeros(A.shape, dtype=object)
    for j in range(n):
        s = A[..., j, j]
        for k in range(j):
            s = s - L[..., j, k] * L[..., j, k]
        L[..., j, j] = _SQRT(s)
        for i in range(j + 1, n):
            s = A[..., i, j]
            for k in range(j):
                s = s - L[..., i, k] * L[..., j, k]
            L[..., i, j] = s / L[..., j, j]
    return L


_ORIGINAL["cholesky"] = np.linalg.cholesky


def _object_ufunc(name: str):
    """np.<name> that also takes object arrays mixing Traced numbers (counted) and plain constants (not
    counted: e.g. cos θ_j of a prismatic joint's constant θ_j), elementwise."""
    original = getattr(np, name)
    _ORIGINAL[name] = original
    scalar = getattr(math, name)
    elementwise = np.frompyfunc(lambda x: getattr(x, name)() if isinstance(x, Traced) else scalar(x), 1, 1)

    def ufunc(x, *args, **kwargs):
        a = np.asarray(x)
        return elementwise(a) if a.dtype == object and not args and not kwargs else original(x, *args, **kwargs)

    return ufunc


_UFUNCS = {name: _object_ufunc(name) for name in ("sin", "cos", "sqrt")}
_SQRT = _UFUNCS["sqrt"]


@contextmanager
def counting():
    """Count the operations done inside the ``with`` block on Traced numbers; yields the :class:`Tally`.

    While active, robodyn's argument checks accept object arrays (``joint_arrays``/``check_array`` are
    swapped in every loaded robodyn module), ``np.linalg.cholesky`` accepts object arrays (textbook
    algorithm, counted) and ``np.sin``/``np.cos``/``np.sqrt`` accept object arrays mixing Traced numbers and
    plain constants.  Everything is restored on exit.
    """
    tally = Tally()
    for table in (api._INVERSE, api._INERTIA, api._FORWARD):  # load every method module first, so all get swapped
        for module in table.values():
            if import_util.find_spec(module) is not None:
                import_module(module)
    swapped = []
    for name, mod in list(sys.modules.items()):
        if name == "robodyn" or name.startswith("robodyn."):
            for attr, new in (("joint_arrays", _joint_arrays), ("check_array", _check_array)):
                if getattr(mod, attr, None) is _ORIGINAL[attr]:
                    swapped.append((mod, attr))
                    setattr(mod, attr, new)
    np.linalg.cholesky = _cholesky
    for name, fn in _UFUNCS.items():
        setattr(np, name, fn)
    _STACK.append(tally)
    try:
        yield tally
    finally:
        _STACK.pop()
        np.linalg.cholesky = _ORIGINAL["cholesky"]
        for name in _UFUNCS:
            setattr(np, name, _ORIGINAL[name])
        for mod, attr in swapped:
            setattr(mod, attr, _ORIGINAL[attr])


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
_KINDS = {
    "inverse": (api._INVERSE, "inverse_dynamics", ("q", "qd", "qdd")),
    "inertia": (api._INERTIA, "inertia_matrix", ("q",)),
    "forward": (api._FORWARD, "forward_dynamics", ("q", "qd", "tau")),
}


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


# --- the seeds' published formulas -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Formula:
    """A published operation count: mul(n), add(n) as polynomial coefficients (highest power first)."""

    source: str
    mul: tuple
    add: tuple | None = None

    def at(self, n: int) -> tuple[float, float | None]:
        m = float(np.polyval(self.mul, n))
        return m, (None if self.add is None else float(np.polyval(self.add, n)))


#: Seed formulas compared with each (kind, method).  Divisions are counted as multiplications everywhere.
SEED_FORMULAS: dict[tuple[str, str], list[Formula]] = {
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
    ("forward", "kalman"): [
        Formula("Kozlowski Table 2, filter+smoother (mult + 6n-10 div)", (270, -359), (264, -411)),
    ],
}
#: Published totals for n = 6 only (Mata Table 4; its G-A entry, 1042 | 905, is Table 3's total at n = 6).
SEED_N6: dict[tuple[str, str], tuple[str, int, int]] = {
    ("forward", "cholesky"): ("Mata Table 4, Walker-Orin CRBA", 1627, 1261),
    ("forward", "recursive"): ("Mata Table 4, Featherstone ABA", 1533, 1415),
}


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
        """Two rows (mult, add) per (method, published count): our exact fit and value at n = 6, the seed's
        formula and value at n = 6, and the difference ours − seed at n = 6."""
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

    HEADER = ("method", "op", "ours (exact fit)", "ours n=6", "seed", "seed formula", "seed n=6", "ours − seed n=6")


def opcount_report(n_max: int = 8, kinds=("inverse", "inertia", "forward"), methods=None,
                   progress=None) -> OpcountReport:
    """Count every installed method of each kind for n = 1..n_max on :func:`counting_robot` arms.

    Parameters
    ----------
    n_max : int ≥ 1
    kinds : subset of ("inverse", "inertia", "forward")
    methods : sequence of str, optional — restrict to these method names
    progress : callable(str), optional — called before each (kind, method)
    """
    from robodyn.analysis.accuracy import available_methods

    if isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 1:
        raise InputError(f"n_max = {n_max!r}; give an integer >= 1")
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
