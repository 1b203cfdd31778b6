"""The PUMA straight-line simulation of Mata et al. (2002) §5.2, Tables 6 and 7 (docs/studies.md §2): the tool
frame follows a segment at constant orientation with a quintic time law; inverse kinematics q*, q̇*, q̈* and
torques Γ* on a grid (:func:`line_reference`); open-loop integration of every forward-dynamics method, restarted
at every 0.1 s output (:func:`integrate_by_intervals`), as Mata et al.'s Fig. 4.
"""

from __future__ import annotations

from types import MappingProxyType
from dataclasses import dataclass, fields, replace

import numpy as np
from scipy.integrate import RK45
from scipy.integrate._ivp.rk import RungeKutta
from scipy.interpolate import CubicSpline, make_interp_spline

from robodyn.model.robot import check_robot
from robodyn.dynamics import api
from robodyn.dynamics.friction_models import SmoothFriction, frictionless
from robodyn.errors import InputError
from robodyn.kinematics import jacobian, jacobian_dot_qd
from robodyn.model.robot import Robot
from robodyn.simulation.integrate import Simulation, simulate
from robodyn.simulation.inverse_kinematics import inverse_kinematics
from robodyn.simulation.trajectories import straight_line, zyz_matrix

P_START = (0.50, 0.00, 0.05)
P_END = (0.62, 0.30, 0.11)
ZYZ_DEG = (0.0, 90.0, 180.0)
DURATION = 5.0
#: Initial guess of the inverse kinematics at t = 0 (rad); the solution is wrapped into (−π, π].
Q_GUESS = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

#: Mata et al.'s Table 6: average |q − q*| (rad), |q̇ − q̇*| (rad/s), |q̈ − q̈*| (rad/s²) per joint (rows 1–6), GA.
MATA_TABLE_6 = np.array([
    [6.91878269e-4, 1.28209533e-3, 2.84439095e-3],
    [1.73972101e-2, 1.66087380e-3, 9.22318761e-2],
    [8.54693990e-4, 1.66087459e-3, 3.13261587e-3],
    [1.73972067e-2, 4.05637323e-2, 9.22318581e-2],
    [1.78259578e-2, 4.17630699e-2, 9.54221869e-3],
    [6.91878269e-4, 1.21908065e-3, 2.43724278e-3],
])
MATA_TABLE_6.flags.writeable = False

#: Mata et al.'s Table 7 (FORTRAN, 400 MHz Pentium II): method → (processing time s, function evaluations);
#: the paper's column "ABM" is the ABA.
MATA_TABLE_7 = MappingProxyType({"CRBA": (0.65, 1122), "ABA": (0.71, 1089), "GA": (0.59, 1092)})

#: How the grid torques Γ* are applied between grid points (:attr:`Reference.torque`).
INTERPOLATIONS = ("cubic", "linear")


@dataclass(frozen=True)
class Reference:
    """Joint-space reference along the line: t (N,), q, qd, qdd, tau (N, n), and the tool pose T (N, 4, 4)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    T: np.ndarray
    interpolation: str = "cubic"

    def torque(self, t):
        """Γ*(t) interpolated between the grid torques, (..., n): a cubic spline (default) or piecewise linear
        (``interpolation = "linear"``: what a program that solves the inverse dynamics only at the grid times and
        interpolates between them applies)."""
        if self.interpolation == "linear":
            return make_interp_spline(self.t, self.tau, k=1, axis=0)(t)
        return CubicSpline(self.t, self.tau, axis=0)(t)


def line_reference(robot: Robot, samples: int = 501, duration: float = DURATION, point=None, q_guess=Q_GUESS,
                   p_start=P_START, p_end=P_END, zyz_deg=ZYZ_DEG, t=None, interpolation: str = "cubic") -> Reference:
    """q*, q̇*, q̈*, Γ* on ``samples`` equally spaced times in [0, duration]: q̇* = J⁻¹ ẋ, q̈* = J⁻¹ (ẍ − J̇ q̇*),
    Γ* with the simulation's smooth friction model.

    Parameters
    ----------
    robot : Robot (6 joints)
    samples : int ≥ 4, grid size (ignored when ``t`` is given)
    duration : float, s
    point : (3,), optional, tool point in the last frame (m); default its origin (the PUMA's wrist centre)
    q_guess : (6,), initial guess of the inverse kinematics at t = 0 (selects the solution branch)
    p_start, p_end : (3,) m;  zyz_deg : (3,) ZYZ Euler angles of the tool frame (degrees)
    t : array_like (N,), optional, explicit times (s) instead of the uniform grid
    interpolation : {"cubic", "linear"}, how :meth:`Reference.torque` interpolates Γ* between grid times

    Returns
    -------
    Reference (q* continuous along the line, starting from the branch selected by ``q_guess``)
    """
    check_robot(robot)
    if interpolation not in INTERPOLATIONS:
        raise InputError(f"interpolation = {interpolation!r}; choose one of {', '.join(INTERPOLATIONS)}")
    if robot.n != 6:
        raise InputError(f"robot '{robot.name}' has n = {robot.n} joints; the straight-line demo needs a 6-joint arm")
    if t is None:
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 4:
            raise InputError(f"samples = {samples!r}; give an integer >= 4")
        t = np.linspace(0.0, duration, samples)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    R = zyz_matrix(*np.radians(zyz_deg))
    T0 = straight_line(p_start, p_end, R, duration, 0.0)[0][0]
    T, xd, xdd = straight_line(p_start, p_end, R, duration, t)
    q0 = inverse_kinematics(robot, T0, np.asarray(q_guess, dtype=float), point=point)
    q0 = np.where(robot.sigma[robot.joint_frames] == 0, (q0 + np.pi) % (2 * np.pi) - np.pi, q0)
    q0 = inverse_kinematics(robot, T0, q0, point=point)
    q = inverse_kinematics(robot, T, q0, point=point)
    J = jacobian(robot, q, point=point)
    qd = np.linalg.solve(J, xd[..., None])[..., 0]
    qdd = np.linalg.solve(J, (xdd - jacobian_dot_qd(robot, q, qd, point=point))[..., None])[..., 0]
    # the simulation's friction model (smooth Coulomb, rx90) so that the open-loop torques reproduce q* exactly
    tau = api.inverse_dynamics(frictionless(robot), q, qd, qdd) + SmoothFriction().torque(robot, qd)
    return Reference(t=t, q=q, qd=qd, qdd=qdd, tau=tau, T=T, interpolation=interpolation)


@dataclass(frozen=True)
class PumaLineResult:
    """Reference at the output times and one :class:`Simulation` per method."""

    robot: str
    reference: Reference
    simulations: tuple[Simulation, ...]

    def _at_outputs(self, sim: Simulation, name: str) -> np.ndarray:
        return CubicSpline(self.reference.t, getattr(self.reference, name), axis=0)(sim.t)

    def table6(self) -> dict[str, np.ndarray]:
        """Average |q − q*|, |q̇ − q̇*|, |q̈ − q̈*| per joint over the output times: method → (n, 3)."""
        out = {}
        for sim in self.simulations:
            cols = [np.abs(getattr(sim, k) - self._at_outputs(sim, k)).mean(0) for k in ("q", "qd", "qdd")]
            out[sim.method] = np.stack(cols, -1)
        return out

    def joint_ranking(self, method: str | None = None) -> tuple[int, ...]:
        """Joints (1-based) by decreasing average |q − q*| of ``method`` (default the first simulated); Mata et
        al.'s Table 6 ranks 5, 2, 4, 3, 1, 6 (``joint_ranking`` of :data:`MATA_TABLE_6`)."""
        t6 = self.table6()
        return joint_ranking(t6[method if method is not None else next(iter(t6))])

    def table7(self) -> dict[str, tuple[float, int]]:
        """Wall-clock time (s) and number of right-hand-side evaluations per method (Mata et al. Table 7: with
        ``restart=True``, summed over the 0.1 s intervals, each integrated afresh)."""
        return {s.method: (s.seconds, s.nfev) for s in self.simulations}

    def plot(self, path) -> None:
        """PNG: reference joint trajectories q*(t) with the simulated ones, and |q − q*| per method (log scale)."""
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone
        from robodyn.sanitize import figure_text  # model-file names shown, never parsed as math text

        from robodyn.files import save_figure

        ref = self.reference
        fig = Figure(figsize=(8, 8))
        ax1, ax2 = fig.subplots(2, 1, sharex=True)
        for j in range(ref.q.shape[1]):
            line, = ax1.plot(ref.t, ref.q[:, j], "-", lw=1, label=f"q*{j + 1}")
            if self.simulations:
                s = self.simulations[0]
                ax1.plot(s.t, s.q[:, j], "o", ms=2, color=line.get_color())
        ax1.set_ylabel("q (rad): lines q*, dots simulated")
        ax1.legend(fontsize=7, ncol=3)
        for s in self.simulations:
            err = np.abs(s.q - self._at_outputs(s, "q")).max(1)
            ax2.semilogy(s.t, np.maximum(err, 1e-16), "-", label=s.method)
        ax2.set_ylabel("max_j |q_j − q*_j| (rad)")
        ax2.set_xlabel("t (s)")
        ax2.legend(fontsize=7)
        fig.suptitle(f"{figure_text(self.robot)}: straight line, open-loop RK45 simulation")
        fig.tight_layout()
        save_figure(fig, path)


_CUMULATIVE = ("work_tau", "work_friction", "work_external")  # integrals from t[0]: offset by the previous piece


def integrate_by_intervals(robot: Robot, torque, q0, qd0, t_eval, method: str, rtol: float = 1e-6,
                           atol: float = 1e-6, integrator="auto") -> Simulation:
    """:func:`simulate` restarted at every output time (Mata et al. §5.2, "an interval of 0.1 s").

    Each interval [t_k, t_k+1] is a fresh initial-value problem from the state reached at t_k, so the
    integrator chooses its first step anew (two evaluations in ``solve_ivp``'s RK45) and takes at least one
    step per interval.  The result is one :class:`Simulation` over all of ``t_eval``: ``nfev`` and
    ``seconds`` are the sums over the intervals, the works ∫Γᵀq̇ … continue from the previous interval.

    Parameters
    ----------
    robot, torque, q0, qd0, method, rtol, atol, integrator : as :func:`simulate`
    t_eval : array_like (N,), N ≥ 2, increasing output times (s); the restarts are at t_eval[1:-1]

    Returns
    -------
    Simulation with t = t_eval
    """
    t_eval = np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size < 2:
        raise InputError(f"t_eval has shape {t_eval.shape}; give at least 2 increasing output times")
    pieces = []
    q, qd = q0, qd0
    for k in range(t_eval.size - 1):  # a loop over time intervals: each starts where the previous ended
        piece = simulate(robot, torque, q, qd, t_eval[k:k + 2], method=method, rtol=rtol, atol=atol,
                         integrator=integrator)
        q, qd = piece.q[-1], piece.qd[-1]
        pieces.append(piece)
    merged = {}
    for f in fields(Simulation):
        first = getattr(pieces[0], f.name)
        if not isinstance(first, np.ndarray) or first.shape[:1] != (2,):
            continue
        parts, offset = [first], first[-1]
        for piece in pieces[1:]:
            later = getattr(piece, f.name)[1:]
            if f.name in _CUMULATIVE:
                later = later + offset
            parts.append(later)
            offset = parts[-1][-1]
        merged[f.name] = np.concatenate(parts)
    return replace(pieces[0], nfev=sum(p.nfev for p in pieces), seconds=sum(p.seconds for p in pieces),
                   **merged)


def puma_line_study(robot: Robot, methods=None, samples: int = 501, output_interval: float = 0.1,
                    rtol: float = 1e-6, atol: float = 1e-6, duration: float = DURATION, point=None,
                    progress=None, restart: bool = True, interpolation: str = "cubic",
                    rotor_inertia: bool = True) -> PumaLineResult:
    """Run the whole study (module docstring) for every forward-dynamics method.

    Parameters
    ----------
    robot : Robot        a 6-joint arm (Mata et al.'s: ``rd.load("puma560")``)
    methods : sequence of str, optional   default every installed method of :func:`robodyn.forward_dynamics`
    samples : int        reference grid size over [0, duration]
    output_interval : float   spacing of the compared outputs (s; Mata et al.'s 0.1 s)
    rtol, atol : RK45 tolerances
    duration : float     length of the motion (s)
    progress : callable(str), optional   called with a message before each stage (for a progress bar)
    restart : bool       restart the integrator at every output (default, Mata et al.'s procedure and
                         Table 7's count, :func:`integrate_by_intervals`) or integrate once (False)
    interpolation : {"cubic", "linear"}   torques between the reference grid times (:meth:`Reference.torque`)
    rotor_inertia : bool  keep the robot's rotor inertias Ia (default) or set them to 0 (Mata et al.'s
                         Gibbs–Appell model has no rotor term)

    Returns
    -------
    PumaLineResult  reference trajectory and one simulation per method (Tables 6 and 7, plot).
    """
    from robodyn.analysis.accuracy import available_methods

    installed = available_methods("forward")
    methods = installed if methods is None else tuple(methods)
    unknown = [m for m in methods if m not in installed]
    if unknown or not methods:
        raise InputError(f"methods = {list(methods)!r}: unknown or none; choose from {', '.join(installed)}")
    t_eval = _output_times(duration, output_interval)
    if not isinstance(rotor_inertia, bool):
        raise InputError(f"rotor_inertia = {rotor_inertia!r}; give True or False")
    if not rotor_inertia:
        robot = robot.replace(Ia=np.zeros_like(robot.Ia))
    if progress:
        progress("reference")
    ref = line_reference(robot, samples=samples, duration=duration, point=point, interpolation=interpolation)
    sims = []
    for m in methods:
        if progress:
            progress(m)
        run = integrate_by_intervals if restart else simulate
        sims.append(run(robot, ref.torque, ref.q[0], ref.qd[0], t_eval, method=m, rtol=rtol, atol=atol))
    return PumaLineResult(robot=robot.name, reference=ref, simulations=tuple(sims))


def _output_times(duration: float, output_interval: float) -> np.ndarray:
    """The compared output times 0, Δ, …, duration for Δ = ``output_interval``, which must divide the duration."""
    count = int(round(duration / output_interval)) if output_interval > 0 else 0
    if count < 1 or not np.isclose(count * output_interval, duration):
        raise InputError(f"output_interval = {output_interval!r}; give a divisor of duration = {duration} s")
    return np.linspace(0.0, duration, count + 1)


def joint_ranking(table6) -> tuple[int, ...]:
    """Joints (1-based) by decreasing first column (average |q − q*|) of a Table 6 array (n, 3), e.g.
    :data:`MATA_TABLE_6` → (5, 2, 4, 3, 1, 6)."""
    return tuple(int(j) + 1 for j in np.argsort(-np.asarray(table6)[:, 0], kind="stable"))


class RKF45(RungeKutta):
    """Fehlberg's 4(5) pair as a :func:`scipy.integrate.solve_ivp` method: six evaluations a step, the
    fifth-order solution propagated (local extrapolation, as the classic FORTRAN RKF45 of Shampine & Watts),
    the error estimated by the difference of the two orders; dense output by cubic Hermite interpolation.
    The "fourth/fifth order Runge–Kutta" of Mata et al.'s FORTRAN program may be this pair or Dormand–Prince
    (scipy's RK45); :func:`evaluation_counts` compares them."""

    order = 5
    error_estimator_order = 4
    n_stages = 6
    C = np.array([0, 1 / 4, 3 / 8, 12 / 13, 1, 1 / 2])
    A = np.array([
        [0, 0, 0, 0, 0],
        [1 / 4, 0, 0, 0, 0],
        [3 / 32, 9 / 32, 0, 0, 0],
        [1932 / 2197, -7200 / 2197, 7296 / 2197, 0, 0],
        [439 / 216, -8, 3680 / 513, -845 / 4104, 0],
        [-8 / 27, 2, -3544 / 2565, 1859 / 4104, -11 / 40],
    ])
    B = np.array([16 / 135, 0, 6656 / 12825, 28561 / 56430, -9 / 50, 2 / 55])
    E = np.append(B - np.array([25 / 216, 0, 1408 / 2565, 2197 / 4104, -1 / 5, 0]), 0.0)
    # y(t + θh) = y + h (θ f₀ + θ² (3Δ − 2f₀ − f₁) + θ³ (f₀ + f₁ − 2Δ)), Δ = Σ B_s K_s, f₁ = K[-1]
    _first, _last, _B = np.eye(7)[0], np.eye(7)[6], np.append(B, 0.0)
    P = np.stack([_first, 3 * _B - 2 * _first - _last, _first + _last - 2 * _B], axis=1)


#: Integrators of :func:`evaluation_counts`.
COUNT_INTEGRATORS = MappingProxyType({"RK45": "RK45", "RKF45": RKF45})


def _with_first_step(integrator, first_step):
    """``integrator`` (a solve_ivp name or class) starting every integration with the step ``first_step``."""
    base = {"RK45": RK45}.get(integrator, integrator)

    def __init__(self, fun, t0, y0, t_bound, **kwargs):
        # an output interval of 0.1 s is 0.1 only up to rounding: never ask for more than the interval
        base.__init__(self, fun, t0, y0, t_bound, first_step=min(first_step, abs(t_bound - t0)), **kwargs)

    return type(f"{base.__name__}FirstStep", (base,), {"__init__": __init__})


def evaluation_counts(robot: Robot, tolerances, samples: int = 501, method: str = "recursive",
                      output_interval: float = 0.1, duration: float = DURATION, first_step: float | None = None,
                      integrator: str = "RK45") -> np.ndarray:
    """Table 7's count against the integrator's settings: right-hand-side evaluations over the line, restarted
    every ``output_interval`` (:func:`integrate_by_intervals`) and integrated once, for each (rtol, atol).

    Parameters
    ----------
    robot : Robot (6 joints)
    tolerances : array_like (k, 2)
        (rtol, atol) pairs.
    samples, method, output_interval, duration : as :func:`puma_line_study`
    first_step : float, optional
        First step of every integration (s); default solve_ivp's choice (two evaluations: f and one probe).
    integrator : {"RK45", "RKF45"}
        Dormand–Prince (scipy's RK45) or Fehlberg's pair (:class:`RKF45`).

    Returns
    -------
    ndarray (k, 2) of int: evaluations restarted, evaluations integrated once.
    """
    tol = np.asarray(tolerances, dtype=float)
    if tol.ndim != 2 or tol.shape[1] != 2 or not np.all(tol > 0):
        raise InputError(f"tolerances has shape {tol.shape}; give (rtol, atol) pairs, each > 0")
    if integrator not in COUNT_INTEGRATORS:
        raise InputError(f"integrator = {integrator!r}; choose one of {', '.join(COUNT_INTEGRATORS)}")
    solver = COUNT_INTEGRATORS[integrator]
    if first_step is not None:
        if not (isinstance(first_step, (int, float)) and 0 < first_step <= output_interval):
            raise InputError(f"first_step = {first_step!r}; give a step in (0, output_interval] seconds, or None")
        solver = _with_first_step(solver, float(first_step))
    t_eval = _output_times(duration, output_interval)
    ref = line_reference(robot, samples=samples, duration=duration)
    out = np.empty((len(tol), 2), dtype=int)
    for k, (rtol, atol) in enumerate(tol):  # one integration per setting: the counts are what is measured
        for i, run in enumerate((integrate_by_intervals, simulate)):
            out[k, i] = run(robot, ref.torque, ref.q[0], ref.qd[0], t_eval, method=method, rtol=rtol, atol=atol,
                            integrator=solver).nfev
    return out
