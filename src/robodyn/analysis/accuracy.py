"""Numerical accuracy of the forward-dynamics methods in single precision (Mata et al. 2002, §5.1, Table 5, after
Ascher, Pai & Cloutier 1997): |q̈_double − q̈_single| over a turn of the last joint (docs/studies.md §1).
"""

from __future__ import annotations

from types import MappingProxyType
import os
from dataclasses import dataclass
from importlib import util as import_util

import numpy as np

from robodyn.model.inertia import matrix_from_rows
from robodyn.model.robot import check_robot
from robodyn.files import save_figure
from robodyn.dynamics import api
from robodyn.errors import InputError
from robodyn.model.robot import Robot


def available_methods(kind: str = "forward") -> tuple[str, ...]:
    """Names of the methods of ``rd.forward_dynamics`` / ``inverse_dynamics`` / ``inertia_matrix`` whose module
    is installed, in the dispatch table's order.

    Parameters
    ----------
    kind : {"forward", "inverse", "inertia"}
    """
    tables = {"forward": api.FORWARD, "inverse": api.INVERSE, "inertia": api.INERTIA}
    if kind not in tables:
        raise InputError(f"kind = {kind!r}; choose one of {', '.join(tables)}")
    return tuple(m for m, module in tables[kind].items() if import_util.find_spec(module) is not None)


class _OverTheTurn:
    """Maximum and mean of ``error`` (rows, steps, n) over the turn's steps."""

    @property
    def max_error(self) -> np.ndarray:
        """Maximum of ``error`` over the turn, (methods or stages, n)."""
        return self.error.max(axis=1)

    @property
    def mean_error(self) -> np.ndarray:
        """Average of ``error`` over the turn, (methods or stages, n)."""
        return self.error.mean(axis=1)


@dataclass(frozen=True)
class AccuracyResult(_OverTheTurn):
    """Results of :func:`accuracy_study`.

    Attributes
    ----------
    robot : str
    angles : ndarray (steps,)
        Angle of the turning (last) joint, rad.
    methods : tuple of str
    qdd_double, qdd_single : ndarray (methods, steps, n)
        q̈ computed in float64 and in float32 (the latter stored as float64), rad/s² (m/s² for prismatic).
    single_dtypes : tuple of str
        dtype each method returned for float32 inputs (``"float32"`` when it honoured single precision).
    cond : ndarray (steps,)
        2-norm condition number of A(q) (float64) at each pose.
    """

    robot: str
    angles: np.ndarray
    methods: tuple[str, ...]
    qdd_double: np.ndarray
    qdd_single: np.ndarray
    single_dtypes: tuple[str, ...]
    cond: np.ndarray

    @property
    def error(self) -> np.ndarray:
        """|q̈_double − q̈_single|, (methods, steps, n)."""
        return np.abs(self.qdd_double - self.qdd_single)

    @property
    def method_spread(self) -> np.ndarray:
        """max |q̈_double(method) − q̈_double(first method)| over poses and joints, (methods,): the float64
        agreement between methods, which must be far below the single-precision errors."""
        return np.abs(self.qdd_double - self.qdd_double[:1]).max(axis=(1, 2))

    def table(self) -> tuple[list[str], list[list[str]]]:
        """Mata et al.'s Table 5 for every joint: header and rows (one per method) of formatted numbers."""
        joints = range(1, self.qdd_double.shape[-1] + 1)
        header = ["method", "dtype", *(f"max |Δq̈{j}|" for j in joints), *(f"mean |Δq̈{j}|" for j in joints),
                  "float64 spread"]
        rows = [[m, self.single_dtypes[k], *(f"{v:.6g}" for v in (*self.max_error[k], *self.mean_error[k])),
                 f"{self.method_spread[k]:.2g}"] for k, m in enumerate(self.methods)]
        return header, rows

    def mata_table5(self) -> dict[str, dict]:
        """Mata et al.'s Table 5 next to ours: for each of their methods present here (ABA, CRBA, GA →
        :data:`MATA_METHODS`; the planar ABA of :data:`STUDY_METHODS` as "ABA, link frame" and "ABA, base
        frame"), ``{"method": ours, "paper": (max, mean), "robodyn": (max, mean)}`` of |Δq̈| of the last joint
        (their q̈₂), rad/s²."""
        rows = [(name, name, method) for name, method in MATA_METHODS.items()]
        rows[1:1] = [("ABA, link frame", "ABA", "aba_link_frame"), ("ABA, base frame", "ABA", "aba_base_frame")]
        keys = [api.NAMES["forward_dynamics"].get(m, m) for m in self.methods]  # aliases ("aba") resolved
        out = {}
        for label, paper, method in rows:
            if method in keys:
                k = keys.index(method)
                out[label] = {"method": method, "paper": MATA_TABLE_5[paper],
                              "robodyn": (float(self.max_error[k, -1]), float(self.mean_error[k, -1]))}
        return out

    def plot(self, path: str | os.PathLike) -> None:
        """Write a PNG: q̈ of each joint vs angle (float32 solid, float64 dashed), |q̈_double − q̈_single| per
        method (log scale) and cond(A) vs angle.

        The file is written to a temporary name and renamed, so no partial file is ever left behind.
        """
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone
        from robodyn.sanitize import figure_text  # model-file names shown, never parsed as math text

        n = self.qdd_double.shape[-1]
        deg = np.degrees(self.angles)
        fig = Figure(figsize=(8, 2.6 * (n + 2)))
        axes = fig.subplots(n + 2, 1, sharex=True)
        for j in range(n):
            ax = axes[j]
            for k, m in enumerate(self.methods):
                line, = ax.plot(deg, self.qdd_single[k, :, j], "-", lw=1, label=f"{m} float32")
                ax.plot(deg, self.qdd_double[k, :, j], "--", lw=1, color=line.get_color(), label=f"{m} float64")
            ax.set_ylabel(f"q̈{j + 1} (rad/s²)")
            ax.legend(fontsize=7, ncol=2)
        for k, m in enumerate(self.methods):
            axes[n].semilogy(deg, np.maximum(self.error[k].max(-1), 1e-12), "-", lw=1, label=m)
        axes[n].set_ylabel("max_j |Δq̈_j| (rad/s²)")
        axes[n].legend(fontsize=7, ncol=2)
        axes[-1].semilogy(deg, self.cond, "k-")
        axes[-1].set_ylabel("cond(A)")
        axes[-1].set_xlabel(f"q{n} (deg)")
        fig.suptitle(f"{figure_text(self.robot)}: forward dynamics in single vs double precision")
        fig.tight_layout()
        save_figure(fig, path)


def accuracy_study(robot: Robot, methods=None, steps: int = 180, solver: str | None = None) -> AccuracyResult:
    """Run the single- vs double-precision study of Mata et al. §5.1 (after Ascher, Pai & Cloutier).

    The last joint takes ``steps`` equally spaced angles through a full turn (``steps = 180``: 2° steps,
    0°…358°), every other joint stays at 0; q̇ = 0, Γ = 0; gravity is the robot's (``ascher2``: along −y).

    Parameters
    ----------
    robot : Robot
    methods : sequence of str, optional
        Methods of :func:`robodyn.forward_dynamics`, or the study's planar articulated-body variants
        ``"aba_link_frame"``, ``"aba_base_frame"`` (:func:`planar_articulated_body`, planar chains only);
        default every installed method of :func:`robodyn.forward_dynamics` (:func:`available_methods`).
    steps : int
        Number of poses (≥ 2).
    solver : {None, "cholesky", "ldlt", "gauss_jordan"}
        None: :func:`robodyn.forward_dynamics`; a name: the methods that form A(q) (``cholesky``, ``gibbs_appell``,
        Mata et al. §4.2) assemble A and H and solve A q̈ = Γ − H with :func:`solve_linear` (``"gauss_jordan"``:
        Mata et al. §5.1); the recursive methods never form A and ignore it.

    Returns
    -------
    AccuracyResult
    """
    _check_study(robot, steps, solver)
    methods = available_methods("forward") if methods is None else tuple(methods)
    if not methods:
        raise InputError("no forward-dynamics method to compare; give methods=[...] or install one")
    q = turn_poses(robot, steps)
    angles = q[:, -1]
    double, single, dtypes = [], [], []
    for m in methods:
        double.append(_forward(robot, q, m, solver))
        out32 = _forward(robot, q.astype(np.float32), m, solver)
        dtypes.append(str(np.asarray(out32).dtype))
        single.append(np.asarray(out32, dtype=np.float64))
    cond = np.linalg.cond(api.inertia_matrix(robot, q))
    return AccuracyResult(
        robot=robot.name, angles=angles, methods=tuple(methods), qdd_double=np.array(double),
        qdd_single=np.array(single), single_dtypes=tuple(dtypes), cond=cond,
    )


# ---- Mata et al.'s set-up: the arm, its condition number, the solvers, the stages --------------------------------

#: Mata et al.'s Table 5: max and average |q̈₂(double) − q̈₂(single)| over the turn (rad/s²), by their method names.
MATA_TABLE_5 = MappingProxyType({"ABA": (0.497600, 0.013240), "CRBA": (1.292200, 0.2750630), "GA": (0.5340020, 0.0087611)})

#: robodyn's forward-dynamics method standing for each of Mata et al.'s (Table 5's columns).
MATA_METHODS = MappingProxyType({"ABA": "recursive", "CRBA": "cholesky", "GA": "gibbs_appell"})

#: Linear solvers of :func:`solve_linear`.
SOLVERS = ("cholesky", "ldlt", "gauss_jordan")

# Methods that form A(q) and the bias H(q, q̇) and then solve: (inertia-matrix method, inverse-dynamics method).
_A_FORMING = MappingProxyType({"cholesky": ("composite", "newton_euler"), "gibbs_appell": ("gibbs_appell", "gibbs_appell")})

# Ascher, Pai & Cloutier's arm as Mata et al. §5.1 give it: lengths, width (m), mass of link 1 (kg), gravity.
_L1, _L2, _WIDTH, _M1, _G = 0.02, 2.0, 0.02, 0.1, 9.81


def ascher_arm(m2: float = 1.0) -> Robot:
    """The two-link arm of Ascher, Pai & Cloutier as described by Mata et al. §5.1, with link 2's mass ``m2``.

    Links are solid uniform bars of square 0.02 m cross-section, l₁ = 0.02 m, l₂ = 2.0 m, m₁ = 0.1 kg; joint 2
    sits at the end of link 1; gravity 9.81 m/s² along −y₀ (orthogonal to the links at q = 0).  Mata et al.'s
    text prints m₂ as "0.00 kg" (lost in print); the built-in ``ascher2`` is ``ascher_arm(1.0)``.

    Parameters
    ----------
    m2 : float
        Mass of link 2 (kg), > 0.

    Returns
    -------
    Robot
    """
    if isinstance(m2, bool) or not isinstance(m2, (int, float, np.integer, np.floating)) or not np.isfinite(m2) \
            or m2 <= 0:
        raise InputError(f"m2 = {m2!r}; give the mass of link 2 in kg, a finite number > 0")
    from robodyn.model.inertia import standard_from_com

    m2 = float(m2)
    w2 = _WIDTH**2
    link1 = standard_from_com(_M1, [_L1 / 2, 0, 0], np.diag([_M1 * 2 * w2 / 12] * 3))
    link2 = standard_from_com(m2, [_L2 / 2, 0, 0], np.diag([m2 * 2 * w2 / 12] + [m2 * (_L2**2 + w2) / 12] * 2))
    return Robot(name="ascher2" if m2 == 1.0 else f"ascher2 (m2 = {m2:g} kg)", sigma=[0, 0], d=[0.0, _L1],
                 params=[link1, link2], gravity=[0.0, -_G, 0.0], frame_names=["j1", "j2"])


def ascher_condition(m2, q2) -> np.ndarray:
    """2-norm condition number of A(q₂) of :func:`ascher_arm` in closed form (broadcast over ``m2`` and ``q2``).

    With J the inertia of a bar about its end and h = l₁ MX₂ cos q₂ (MX₂ = m₂ l₂/2):
    A = [[ZZ₁ + ZZ₂ + m₂ l₁² + 2h, ZZ₂ + h], [ZZ₂ + h, ZZ₂]] (Khalil & Dombre's planar 2R model), so
    det A = ZZ₂ (ZZ₁ + m₂ l₁²) − h², tr A = ZZ₁ + 2 ZZ₂ + m₂ l₁² + 2h, and
    cond = (tr + √(tr² − 4 det)) / (tr − √(tr² − 4 det)) (docs/studies.md §1 draws it against m₂).

    Parameters
    ----------
    m2 : array_like
        Mass of link 2 (kg).
    q2 : array_like
        Angle of joint 2 (rad).

    Returns
    -------
    ndarray, broadcast shape of ``m2`` and ``q2``
    """
    m2, q2 = np.asarray(m2, dtype=float), np.asarray(q2, dtype=float)
    w2 = _WIDTH**2
    zz1 = _M1 * 2 * w2 / 12 + _M1 * (_L1 / 2) ** 2
    zz2 = m2 * (_L2**2 + w2) / 12 + m2 * (_L2 / 2) ** 2
    h = _L1 * m2 * _L2 / 2 * np.cos(q2)
    det = zz2 * (zz1 + m2 * _L1**2) - h**2
    tr = zz1 + 2 * zz2 + m2 * _L1**2 + 2 * h
    root = np.sqrt(tr**2 - 4 * det)
    return (tr + root) / (tr - root)


def turn_poses(robot: Robot, steps: int) -> np.ndarray:
    """The poses of the study, (steps, n): the last joint at 2π k / steps, k = 0 … steps − 1, the others at 0."""
    q = np.zeros((steps, robot.n))
    q[:, -1] = 2 * np.pi * np.arange(steps) / steps
    return q


def _check_study(robot: Robot, steps, solver) -> None:
    check_robot(robot)
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 2:
        raise InputError(f"steps = {steps!r}; give an integer >= 2 (180 gives Mata et al.'s 2° steps)")
    _check_solver(solver, allow_none=True)


def _check_solver(solver, allow_none=False) -> None:
    if solver is None and allow_none:
        return
    if solver not in SOLVERS:
        raise InputError(f"solver = {solver!r}; choose one of {', '.join(SOLVERS)}"
                         + (" (or None: the method's own)" if allow_none else ""))


def solve_linear(A, b, solver: str = "gauss_jordan") -> np.ndarray:
    """x with A x = b for a batch of symmetric positive definite A, in the dtype of the inputs (float32 stays
    float32: every operation is done in it).

    ``"cholesky"``: A = L Lᵀ and two substitutions (Khalil & Dombre [9.96]); ``"ldlt"``: the square-root-free
    A = L D Lᵀ; ``"gauss_jordan"``: Gauss–Jordan elimination with partial (row) pivoting on [A | b], each pivot
    row scaled by the reciprocal of its pivot, as Mata et al. §5.1 solve CRBA's and GA's systems (after Akai's
    textbook, their ref. [25]).  Python loops run over the n rows only.

    Parameters
    ----------
    A : array_like (..., n, n)
    b : array_like (..., n)
    solver : {"cholesky", "ldlt", "gauss_jordan"}

    Returns
    -------
    ndarray (..., n), float32 when A and b are float32, float64 otherwise.

    Raises
    ------
    InputError
        A zero pivot (singular A) or, for the factorisations, a non-positive one.
    """
    _check_solver(solver)
    A, b = np.asarray(A), np.asarray(b)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or b.shape[-1:] != A.shape[-1:]:
        raise InputError(f"A has shape {A.shape} and b {b.shape}; give A (..., n, n) and b (..., n)")
    dtype = np.float32 if A.dtype == np.float32 and b.dtype == np.float32 else np.float64
    batch = np.broadcast_shapes(A.shape[:-2], b.shape[:-1])
    n = A.shape[-1]
    A = np.broadcast_to(A, batch + (n, n)).astype(dtype)  # a writable copy
    b = np.broadcast_to(b, batch + (n,)).astype(dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x, pivots_ok = _solve(A, b, solver, dtype, batch, n)
    if not (pivots_ok and np.all(np.isfinite(x))):
        raise InputError(f"solve_linear: A is singular{'' if solver == 'gauss_jordan' else ' or not positive definite'}"
                         f" for solver {solver!r} (a zero or negative pivot); check A, or use gauss_jordan for a "
                         "non-symmetric A")
    return x


def _solve(A, b, solver, dtype, batch, n):
    """(x, every pivot usable) by ``solver``; loops over the rows only."""
    if solver == "gauss_jordan":
        M = np.concatenate([A, b[..., None]], axis=-1)
        rows = np.arange(n)
        for k in range(n):
            p = k + np.argmax(np.abs(M[..., k:, k]), axis=-1)  # partial pivoting, per sample
            swap = np.broadcast_to(rows, batch + (n,)).copy()  # the permutation exchanging rows k and p
            swap[..., k] = p
            np.put_along_axis(swap, p[..., None], k, axis=-1)
            M = np.take_along_axis(M, swap[..., None], axis=-2)
            M[..., k, :] = M[..., k, :] * (dtype(1) / M[..., k, k])[..., None]
            others = rows != k
            M[..., others, :] = M[..., others, :] - M[..., others, k][..., None] * M[..., k, None, :]
        return M[..., n], True
    L = np.zeros_like(A)
    D = np.zeros(batch + (n,), dtype)
    for j in range(n):  # column j of L (and D_j), rows j + 1 … n − 1 at once
        below, row_j = L[..., j + 1:, :j], L[..., j, None, :j]  # the finished columns 0 … j − 1
        if solver == "cholesky":
            L[..., j, j] = np.sqrt(A[..., j, j] - np.sum(L[..., j, :j] ** 2, axis=-1))
            L[..., j + 1:, j] = (A[..., j + 1:, j] - np.sum(below * row_j, axis=-1)) / L[..., j, j, None]
        else:
            D[..., j] = A[..., j, j] - np.sum(L[..., j, :j] ** 2 * D[..., :j], axis=-1)
            L[..., j, j] = 1
            L[..., j + 1:, j] = (A[..., j + 1:, j] - np.sum(below * row_j * D[..., None, :j], axis=-1)) / D[..., j, None]
    y = np.zeros_like(b)
    for i in range(n):  # L y = b
        y[..., i] = (b[..., i] - np.sum(L[..., i, :i] * y[..., :i], axis=-1)) / L[..., i, i]
    if solver == "ldlt":
        y = y / D
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):  # Lᵀ x = y
        x[..., i] = (y[..., i] - np.sum(L[..., i + 1:, i] * x[..., i + 1:], axis=-1)) / L[..., i, i]
    return x, solver == "cholesky" or bool(np.all(D > 0))


def _parts(robot: Robot, q, method: str):
    """A(q) and H(q, 0) (Γ = 0, q̇ = 0: q̈ solves A q̈ = −H) with the formulation of ``method``, in q's dtype."""
    inertia, inverse = _A_FORMING[method]
    zero = np.zeros_like(q)
    return api.inertia_matrix(robot, q, method=inertia), api.inverse_dynamics(robot, q, zero, zero, method=inverse)


def _forward(robot: Robot, q, method: str, solver: str | None) -> np.ndarray:
    """q̈ at Γ = 0, q̇ = 0 by ``method``; with ``solver``, the A-forming methods assemble A and H and solve."""
    if method in STUDY_METHODS:
        return planar_articulated_body(robot, q, frame=STUDY_METHODS[method])
    if solver is None or _key(method) not in _A_FORMING:
        zero = np.zeros_like(q)
        return api.forward_dynamics(robot, q, zero, zero, method=method)
    A, H = _parts(robot, q, _key(method))
    return solve_linear(A, -H, solver)


def _key(method) -> str:
    """The dispatch name of a forward-dynamics method (aliases such as ``"aba"`` resolved)."""
    if not isinstance(method, str):
        raise InputError(f"method = {method!r}; give a method name such as 'recursive'")
    return api.method_key("forward_dynamics", method)


#: The stages of :func:`stage_study`, in order.
STAGES = ("angles", "inertia matrix", "bias", "storage of A", "solve", "all")


@dataclass(frozen=True)
class StageResult(_OverTheTurn):
    """Results of :func:`stage_study`: the error when one stage at a time is done in float32.

    Attributes
    ----------
    robot, method : str
    solver : str or None
    stages : tuple of str
        Subset of :data:`STAGES` (the recursive methods, which never form A, have "angles" and "all" only).
    error : ndarray (stages, steps, n)
        |q̈_double − q̈_stage| (rad/s²).
    """

    robot: str
    method: str
    solver: str | None
    stages: tuple[str, ...]
    error: np.ndarray


def stage_study(robot: Robot, method: str = "gibbs_appell", steps: int = 180, solver: str | None = None) -> StageResult:
    """Which operation loses the digits: q̈ of :func:`accuracy_study`'s poses with exactly one stage in float32.

    Stages (everything else in float64):

    * ``angles``: q rounded to float32 (what a single-precision program is given), the dynamics in float64;
    * ``inertia matrix``: A(q) computed in float32 from the float32 angles;
    * ``bias``: H(q, 0) computed in float32;
    * ``storage of A``: the float64 A(q) rounded to float32 (as a REAL array stores it), solved in float64;
    * ``solve``: the float64 A and H rounded to float32, the solve in float32;
    * ``all``: every operation in float32 (:func:`accuracy_study`'s single precision).

    Parameters
    ----------
    robot, steps, solver : as :func:`accuracy_study`.
    method : str
        A forward-dynamics method; for those that never form A (``recursive``, ``spatial_operator``) only
        ``angles`` and ``all`` are defined.

    Returns
    -------
    StageResult
    """
    _check_study(robot, steps, solver)
    if not isinstance(method, str) or api.NAMES["forward_dynamics"].get(method) not in available_methods("forward"):
        raise InputError(f"method = {method!r}; choose one of {', '.join(available_methods('forward'))}")
    method = _key(method)
    q = turn_poses(robot, steps)
    q32 = q.astype(np.float32)
    single = {"angles": lambda: _forward(robot, q32.astype(np.float64), method, solver),
              "all": lambda: _forward(robot, q32, method, solver)}
    if method in _A_FORMING:
        how = solver or "cholesky"
        A, H = _parts(robot, q, method)
        A32, H32 = _parts(robot, q32, method)
        f64 = np.float64
        single.update({
            "inertia matrix": lambda: solve_linear(A32.astype(f64), -H, how),
            "bias": lambda: solve_linear(A, -H32.astype(f64), how),
            "storage of A": lambda: solve_linear(A.astype(np.float32).astype(f64), -H, how),
            "solve": lambda: solve_linear(A.astype(np.float32), -H.astype(np.float32), how),
        })
    stages = tuple(s for s in STAGES if s in single)
    reference = _forward(robot, q, method, solver)
    error = np.array([np.abs(reference - np.asarray(single[s](), dtype=np.float64)) for s in stages])
    return StageResult(robot=robot.name, method=method, solver=solver, stages=stages, error=error)


@dataclass(frozen=True)
class MassScan:
    """Results of :func:`mass_scan`, one entry per candidate m₂ (arrays of shape (masses,)).

    Attributes
    ----------
    m2 : ndarray        candidate masses of link 2 (kg)
    cond_min, cond_max : ndarray   range of cond(A) over the turn
    floor_max, floor_mean : ndarray
        max / mean |Δq̈₂| when only the storage of the float64 A(q) in float32 differs (:func:`stage_study`'s
        ``storage of A``): what every method that stores A in single precision loses at least.
    max_error, mean_error : dict str → ndarray
        max / mean |Δq̈₂| of each of Mata et al.'s methods ("ABA", "CRBA", "GA") all in float32, with ``solver``.
    solver : str
    """

    m2: np.ndarray
    cond_min: np.ndarray
    cond_max: np.ndarray
    floor_max: np.ndarray
    floor_mean: np.ndarray
    max_error: dict
    mean_error: dict
    solver: str

    def plot(self, path: str | os.PathLike) -> None:
        """Write a PNG: cond(A) vs q₂ for each candidate m₂ (closed form, :func:`ascher_condition`; Mata et al.'s
        Fig. 2 draws one of these curves), and the mean |Δq̈₂| vs m₂ of each method and of the storage floor,
        with Mata et al.'s Table 5 means as horizontal lines.  Written atomically."""
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone

        fig = Figure(figsize=(8, 7))
        top, bottom = fig.subplots(2, 1)
        deg = np.arange(0.0, 360.0, 2.0)
        for m2 in self.m2:
            top.semilogy(deg, ascher_condition(m2, np.radians(deg)), lw=1, label=f"m₂ = {m2:g} kg")
        top.set_xlabel("q₂ (deg)")
        top.set_ylabel("cond(A)")
        top.legend(fontsize=7, ncol=2)
        for name, values in self.mean_error.items():
            line, = bottom.loglog(self.m2, values, "o-", lw=1, label=f"{name} (robodyn)")
            bottom.axhline(MATA_TABLE_5[name][1], color=line.get_color(), ls="--", lw=1, label=f"{name} (Mata et al.)")
        bottom.loglog(self.m2, self.floor_mean, "k:", lw=1, label="exact A stored in float32")
        bottom.set_xlabel("m₂ (kg)")
        bottom.set_ylabel(f"mean |Δq̈₂| (rad/s²), solver {self.solver}")
        bottom.legend(fontsize=7, ncol=2)
        fig.suptitle("Ascher–Pai–Cloutier arm: condition number and single-precision error vs m₂")
        fig.tight_layout()
        save_figure(fig, path)


def mass_scan(m2_values, steps: int = 180, solver: str = "gauss_jordan") -> MassScan:
    """Table 5 and the condition number of :func:`ascher_arm` for candidate values of the garbled m₂.

    Parameters
    ----------
    m2_values : array_like (masses,)
        Candidate masses of link 2 (kg), each > 0.
    steps : int
        Poses over the turn.
    solver : {"cholesky", "ldlt", "gauss_jordan"}
        Solver of CRBA and GA (Mata et al.: Gauss–Jordan).

    Returns
    -------
    MassScan
    """
    _check_solver(solver)
    m2_values = np.atleast_1d(np.asarray(m2_values, dtype=float))
    if m2_values.ndim != 1 or m2_values.size == 0:
        raise InputError(f"m2_values has shape {m2_values.shape}; give a list of masses (kg)")
    methods = [m for m in MATA_METHODS.values() if m in available_methods("forward")]
    cmin, cmax, fmax, fmean = [], [], [], []
    emax = {name: [] for name, m in MATA_METHODS.items() if m in methods}
    emean = {name: [] for name in emax}
    for m2 in m2_values:  # a loop over candidate robots, each study batched over the poses
        robot = ascher_arm(float(m2))
        cond = ascher_condition(m2, turn_poses(robot, steps)[:, -1])
        cmin.append(cond.min())
        cmax.append(cond.max())
        floor = stage_study(robot, "cholesky", steps=steps, solver=solver)
        k = floor.stages.index("storage of A")
        fmax.append(floor.max_error[k, -1])
        fmean.append(floor.mean_error[k, -1])
        res = accuracy_study(robot, methods=methods, steps=steps, solver=solver)
        for name in emax:
            i = res.methods.index(MATA_METHODS[name])
            emax[name].append(res.max_error[i, -1])
            emean[name].append(res.mean_error[i, -1])
    return MassScan(m2=m2_values, cond_min=np.array(cmin), cond_max=np.array(cmax), floor_max=np.array(fmax),
                    floor_mean=np.array(fmean), max_error={k: np.array(v) for k, v in emax.items()},
                    mean_error={k: np.array(v) for k, v in emean.items()}, solver=solver)


# ---- the articulated-body algorithm in link frames and in the base frame (planar chains) -------------------------

#: Frames in which :func:`planar_articulated_body` expresses the articulated inertias.
ABA_FRAMES = ("link", "base")

#: Study-only forward-dynamics methods of :func:`accuracy_study`: the planar ABA in each frame.
STUDY_METHODS = MappingProxyType({"aba_link_frame": "link", "aba_base_frame": "base"})


def _check_planar(robot: Robot) -> None:
    problems, n = [], robot.n  # frames after the n joints (a tool frame) are fixed and massless: they change nothing
    if np.any(robot.sigma[:n] != 0):
        problems.append("a joint is not revolute")
    if np.any(robot.alpha[:n] != 0) or (robot.gamma is not None and np.any(robot.gamma[:n] != 0)):
        problems.append("a joint axis is not parallel to z0 (α or γ ≠ 0)")
    if not robot.is_serial:
        problems.append("it is not a serial chain of joints")
    if np.any(robot.sigma[n:] != 2) or np.any(robot.params[n:] != 0) or np.any(robot.Ia[n:] != 0):
        problems.append("a frame after the joints moves or carries mass")
    if problems:
        raise InputError(f"robot '{robot.name}' is not a planar revolute chain ({'; '.join(problems)}); the planar "
                         "articulated-body study needs parallel revolute axes (e.g. ascher2, planar2r)")


def planar_articulated_body(robot: Robot, q, tau=None, frame: str = "link") -> np.ndarray:
    """q̈ at q̇ = 0 by Featherstone's articulated-body algorithm for a planar revolute chain, in the dtype of q.

    Planar spatial vectors (ω_z, v_x, v_y); only ZZ_j, MX_j, MY_j, M_j and Ia_j enter (every axis along z₀).
    Backward pass U_j = I^A_j S_j, D_j = S_jᵀ U_j + Ia_j, I^A_{j−1} += I^A_j − U_j U_jᵀ / D_j (Featherstone's
    textbook update), forward pass q̈_j = (Γ_j − S_jᵀ p^A_j − U_jᵀ a_{j−1}) / D_j from a₀ = −g; ``frame``
    ``"link"``: every quantity in frame j at O_j, S_j = (1, 0, 0) (the form of Khalil & Dombre [9.117]);
    ``"base"``: in R₀ at O₀, S_j = (1, p_y, −p_x), whose pivots cancel for an ill-conditioned A(q)
    (docs/studies.md §1).

    Parameters
    ----------
    robot : Robot
        Serial chain of revolute joints with parallel axes (all α, γ = 0); frames after the joints (a tool
        frame) must be fixed and massless.
    q : array_like (..., n)
        Joint angles (rad); float32 in, float32 arithmetic throughout.
    tau : array_like (..., n), optional
        Joint torques (N m), default 0.
    frame : {"link", "base"}

    Returns
    -------
    ndarray (..., n)  q̈ (rad/s²) at zero joint velocities.
    """
    check_robot(robot)
    _check_planar(robot)
    if frame not in ABA_FRAMES:
        raise InputError(f"frame = {frame!r}; choose one of {', '.join(ABA_FRAMES)}")
    q = np.asarray(q)
    dtype = np.float32 if q.dtype == np.float32 else np.float64
    q = q.astype(dtype)
    if q.shape[-1:] != (robot.n,):
        raise InputError(f"q has shape {q.shape}; give (..., {robot.n}) joint angles")
    tau = np.zeros_like(q) if tau is None else np.broadcast_to(np.asarray(tau, dtype=dtype), q.shape)
    n = robot.n
    P = robot.params
    th = q + robot.theta[:n].astype(dtype)
    one, zero = np.ones_like(th[..., 0]), np.zeros_like(th[..., 0])
    S, I, X = [], [], []
    angle, px, py = zero, zero, zero  # base frame: orientation and origin of frame j
    for j in range(n):  # loops over joints only
        zz, mx, my, m, d = (dtype(v) for v in (P[j, 5], P[j, 6], P[j, 7], P[j, 9], robot.d[j]))
        c, s = np.cos(th[..., j]), np.sin(th[..., j])
        if frame == "link":
            # motion transform from frame j−1 to j: v' = E (v + ω ẑ × d x̂), E the rotation by −θ_j
            X.append(matrix_from_rows((one, zero, zero), (s * d, c, s), (c * d, -s, c)))
            S.append(np.stack([one, zero, zero], -1))
            hx, hy, izz = mx * one, my * one, zz * one
        else:
            px, py = px + np.cos(angle) * d, py + np.sin(angle) * d
            angle = angle + th[..., j]
            ca, sa = np.cos(angle), np.sin(angle)
            S.append(np.stack([one, py, -px], -1))
            hx0, hy0 = ca * mx - sa * my, sa * mx + ca * my  # first moment about O_j, base axes
            izz = zz + 2 * (px * hx0 + py * hy0) + m * (px * px + py * py)  # about O₀ (parallel axes)
            hx, hy = hx0 + m * px, hy0 + m * py
        I.append(matrix_from_rows((izz, -hy, hx), (-hy, m * one, zero), (hx, zero, m * one)))
    IA, pA = I, [np.zeros(th.shape[:-1] + (3,), dtype) for _ in range(n)]
    U, D, u = [None] * n, [None] * n, [None] * n
    for j in range(n - 1, -1, -1):
        U[j] = np.einsum("...ab,...b->...a", IA[j], S[j])
        D[j] = np.sum(S[j] * U[j], -1) + dtype(robot.Ia[j])
        u[j] = tau[..., j] - np.sum(S[j] * pA[j], -1)
        if j > 0:
            Ia = IA[j] - U[j][..., :, None] * U[j][..., None, :] / D[j][..., None, None]
            pa = pA[j] + U[j] * (u[j] / D[j])[..., None]
            if frame == "link":  # to frame j−1: Xᵀ I X, Xᵀ p
                XT = np.swapaxes(X[j], -1, -2)
                Ia, pa = XT @ Ia @ X[j], np.einsum("...ab,...b->...a", XT, pa)
            IA[j - 1] = IA[j - 1] + Ia
            pA[j - 1] = pA[j - 1] + pa
    g = robot.gravity.astype(dtype)
    a = np.broadcast_to(np.array([0, -g[0], -g[1]], dtype), th.shape[:-1] + (3,))
    qdd = np.empty_like(th)
    for j in range(n):
        if frame == "link":
            a = np.einsum("...ab,...b->...a", X[j], a)
        qdd[..., j] = (u[j] - np.sum(U[j] * a, -1)) / D[j]
        a = a + S[j] * qdd[..., j][..., None]
    return qdd
