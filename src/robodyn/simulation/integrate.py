"""Open- and closed-loop simulation: integrate A(q) q̈ + H(q, q̇) = Γ − Γ_f + Γ_ext with scipy's solve_ivp, the
friction from a simulation friction model (:mod:`robodyn.dynamics.friction_models`), the work integrals carried
along so that every result checks its energy balance (De Luca; docs/simulation-control.md §1–§2, §4).
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from robodyn.arrays import as_real_array, finite_array
from robodyn.model.robot import check_robot
from robodyn.dynamics import api
from robodyn.dynamics.discrete import check_sample_time
from robodyn.dynamics.friction_models import (
    LuGre, StickSlipFriction, joint_column, stribeck_factor, breakaway_levels, friction_model, frictionless,
)
from robodyn.dynamics.lagrange import kinetic_energy, potential_energy
from robodyn.errors import InputError, RobodynError
from robodyn.model.robot import Robot
from robodyn.simulation.step import saturation_limits


@dataclass(frozen=True)
class Simulation:
    """Result of :func:`simulate`.

    Attributes
    ----------
    method : str            forward-dynamics method
    t : ndarray (N,)        output times (s)
    q, qd, qdd : ndarray (N, n)  joint positions, velocities, accelerations at ``t``
    nfev : int              number of right-hand-side evaluations
    seconds : float         wall-clock time of the integration (s)
    tau : ndarray (N, n)    applied joint torques Γ (after saturation), N m | N
    saturated : ndarray (N, n) bool   True where Γ_j is at its limit, |Γ_j| = L_j (the command was clipped);
                            all False when nothing saturates (``saturate=False``, or a robot without ``taulim``)
    tau_friction : ndarray (N, n)  friction torques Γ_f of the simulation friction model
    tau_external : ndarray (N, n)  joint torques Γ_ext = −Jᵀ W of the external wrenches (zero without)
    z : ndarray (N, n) or None     LuGre bristle states
    kinetic, potential : ndarray (N,)   energies (J), rotors included
    work_tau, work_friction, work_external : ndarray (N,)   ∫Γᵀq̇, ∫Γ_fᵀq̇, ∫Γ_extᵀq̇ from t[0] (J)
    friction : object       the friction model used
    q_reference : ndarray (N, n) or None   the reference q_r(t) a controller tracked (rad | m)
    """

    method: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    nfev: int
    seconds: float
    tau: np.ndarray | None = None
    tau_friction: np.ndarray | None = None
    tau_external: np.ndarray | None = None
    z: np.ndarray | None = None
    kinetic: np.ndarray | None = None
    potential: np.ndarray | None = None
    work_tau: np.ndarray | None = None
    work_friction: np.ndarray | None = None
    work_external: np.ndarray | None = None
    friction: object = field(default=None)
    robot: str = ""
    q_reference: np.ndarray | None = None
    saturated: np.ndarray | None = None

    @property
    def energy(self) -> np.ndarray:
        """Total energy E = kinetic + potential (N,), J."""
        return self.kinetic + self.potential

    @property
    def energy_error(self) -> np.ndarray:
        """E(t) − E(0) − (W_Γ − W_f + W_ext) (N,), J: zero up to the integrator tolerance."""
        E = self.energy
        return E - E[0] - (self.work_tau - self.work_friction + self.work_external)

    def plot(self, path) -> None:
        """PNG: q(t) (with the reference q_r(t) dashed when a controller tracked one), the tracking error
        q − q_r, q̇(t), Γ(t), and the energy balance (E − E0 and the works)."""
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figures are left alone
        from robodyn.sanitize import figure_text  # model-file names shown, never parsed as math text

        from robodyn.files import save_figure

        tracked = self.q_reference is not None
        fig = Figure(figsize=(8, 11 if tracked else 9))
        axes = list(fig.subplots(5 if tracked else 4, 1, sharex=True))
        ax_q, ax_e = axes[0], (axes.pop(1) if tracked else None)
        for j in range(self.q.shape[1]):
            line, = ax_q.plot(self.t, self.q[:, j], lw=1, label=f"q{j + 1}")
            if tracked:
                ax_q.plot(self.t, self.q_reference[:, j], "--", lw=0.8, color=line.get_color())
                ax_e.plot(self.t, self.q[:, j] - self.q_reference[:, j], lw=1, color=line.get_color())
            axes[1].plot(self.t, self.qd[:, j], lw=1)
            axes[2].plot(self.t, self.tau[:, j], lw=1)
        ax_q.set_ylabel("q (rad | m)")
        ax_q.legend(fontsize=7, ncol=4, title="dashed: reference q_r" if tracked else None, title_fontsize=7)
        if tracked:
            ax_e.set_ylabel("q − q_r (rad | m)")
        axes[1].set_ylabel("q̇ (rad/s | m/s)")
        axes[2].set_ylabel("Γ (N m | N)")
        E = self.energy
        axes[3].plot(self.t, E - E[0], "k-", lw=1.5, label="E − E(0)")
        axes[3].plot(self.t, self.work_tau, "--", lw=1, label="W_Γ")
        axes[3].plot(self.t, -self.work_friction, ":", lw=1, label="−W_f")
        if np.any(self.work_external != 0):
            axes[3].plot(self.t, self.work_external, "-.", lw=1, label="W_ext")
        axes[3].set_ylabel("energy (J)")
        axes[3].set_xlabel("t (s)")
        axes[3].legend(fontsize=7)
        fig.suptitle(f"{figure_text(self.robot)}: simulation ({type(self.friction).__name__})")
        fig.tight_layout()
        save_figure(fig, path)


#: solve_ivp's methods.
INTEGRATORS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def initial_state(robot, q0, qd0, t_eval):
    """The checked start of a simulation: q0, qd0 (n,) finite, t_eval (N,) increasing finite times, N ≥ 2."""
    check_robot(robot)
    n = robot.n
    q0, qd0 = finite_array("q0", q0), finite_array("qd0", qd0)
    if q0.shape != (n,) or qd0.shape != (n,):
        raise InputError(f"q0 and qd0 must have shape ({n},) for robot '{robot.name}'")
    t_eval = as_real_array("t_eval", t_eval).astype(float)
    if t_eval.ndim != 1 or t_eval.size < 2 or not np.all(np.isfinite(t_eval)) or np.any(np.diff(t_eval) <= 0):
        raise InputError("t_eval must be an increasing 1-D array of at least 2 finite times (s)")
    return q0, qd0, t_eval


class _TooManyEvaluations(Exception):
    pass


def _evaluated(count: list, max_evaluations: int) -> None:
    """One more right-hand-side evaluation counted in ``count[0]``; _TooManyEvaluations past ``max_evaluations``."""
    count[0] += 1
    if count[0] > max_evaluations:
        raise _TooManyEvaluations


def _kind(command) -> str:
    """'torque' for Γ(t), 'controller' for Γ(t, q, q̇), decided by the number of required positional arguments."""
    if not callable(command):
        raise InputError("argument 'torque' must be a callable torque(t) or controller(t, q, qd)")
    try:
        sig = inspect.signature(command)
    except (TypeError, ValueError):
        raise InputError("cannot read the signature of the torque/controller callable; wrap it in a Python "
                         "function torque(t) or controller(t, q, qd)") from None
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()) or len(positional) == 3:
        return "controller"
    if len(positional) == 1:
        return "torque"
    raise InputError(f"the torque/controller callable takes {len(positional)} required arguments; give "
                     "torque(t) (open loop) or controller(t, q, qd) (closed loop)")


def simulate(
    robot: Robot, torque, q0, qd0, t_eval, method: str = "recursive", rtol: float = 1e-6, atol: float = 1e-6,
    integrator: str = "auto", friction=None, torque_limits=None, wrenches=None, max_evaluations: int = 200_000,
    reference=None, sample_time=None, saturate: bool = True,
) -> Simulation:
    """Integrate the direct dynamic model [9.96] from (q0, q̇0), open loop Γ(t) or closed loop Γ(t, q, q̇).

    The state is y = [q; q̇; z; W_Γ; W_f; W_ext] and
    ẏ = [q̇; A⁻¹(Γ − Γ_f − H_rigid(q, q̇) + Γ_ext); ż; Γᵀq̇; Γ_fᵀq̇; Γ_extᵀq̇], the rigid-body part by
    ``rd.forward_dynamics(frictionless robot, ..., method=method)``, the friction by ``friction``.

    Parameters
    ----------
    robot : Robot
    torque : callable
        ``torque(t)`` (open loop; t scalar → (n,), t (N,) → (N, n)) or ``controller(t, q, qd)`` (closed loop,
        e.g. :class:`robodyn.control.ComputedTorque`; t scalar or (N,), q, qd (n,) or (N, n) → (n,) or (N, n)).
        Told apart by the number of required positional arguments (1 or 3).
    q0, qd0 : array_like (n,)
    t_eval : array_like (N,), increasing output times, the first is the initial time (s)
    method : forward-dynamics method name
    rtol, atol : solve_ivp tolerances
    integrator : 'auto' (default: LSODA when the friction model is stiff and the robot has Coulomb friction,
        RK45 otherwise), a solve_ivp method name or an OdeSolver subclass
    friction : None | 'smooth' | 'lugre' | 'stick-slip' | 'discontinuous' | 'none' | a model instance
        Simulation friction model (:mod:`robodyn.dynamics.friction_models`); default
        ``SmoothFriction(width=0.01)``, built from the robot's F_c, F_v, Stribeck and offset.
        ``StickSlipFriction`` integrates piecewise between switching events (docs/simulation-control.md §2).
    torque_limits : array_like (n,), optional, |Γ_j| ≤ limit_j (N m | N, inf for an unlimited joint): the
        command saturates there instead of at the robot's ``taulim``
    wrenches : callable(t, q, qd) → (nf, 6), optional, external wrenches [f_ej; m_ej] exerted by each link on
        the environment (frame R_j, about O_j, the convention of :func:`robodyn.inverse_dynamics`); batched
        like the controller
    max_evaluations : int, limit on right-hand-side evaluations
    reference : object with ``sample(t) -> (q_r, q̇_r, q̈_r)``, optional
        The reference the controller tracks, kept on the result as ``q_reference`` (and drawn by ``plot`` with
        the tracking error); default: the controller's own ``reference`` when it has one.
    sample_time : float, optional, a sample period T_s > 0 (s): a sampled controller with zero-order hold
        (docs/simulation-control.md §4), evaluated once at each sample instant s_k = t_eval[0] + k T_s; its
        ``reset()`` is called first when it has one (:class:`robodyn.control.SampledPID`); ``tau`` on the result
        is the held torque. Not with the stick–slip friction model. Default: evaluated continuously.
    saturate : bool, default True
        The applied torque is Γ = clip(command, −L, L), L the ``torque_limits`` or else the robot's ``taulim``
        (:func:`robodyn.simulation.step.saturation_limits`); ``saturated`` on the result marks the samples at
        their limit. False applies the command as given (then ``torque_limits`` must not be given).

    Returns
    -------
    Simulation

    Raises
    ------
    InputError
        Bad shapes, non-finite values, unknown integrator or friction model, ``saturate`` not a bool.
    RobodynError
        When the integrator fails (the message is scipy's) or hits ``max_evaluations``.
    """
    q0, qd0, t_eval = initial_state(robot, q0, qd0, t_eval)
    n = robot.n
    if isinstance(integrator, str) and integrator not in INTEGRATORS + ("auto",):
        raise InputError(f"integrator = {integrator!r}; choose one of auto, {', '.join(INTEGRATORS)}")
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, (int, np.integer)) or max_evaluations < 1:
        raise InputError(f"max_evaluations = {max_evaluations!r}; give a positive integer")
    model = friction_model(friction)
    limits = saturation_limits(robot, saturate, torque_limits)
    kind = _kind(torque)
    if integrator == "auto":
        integrator = "LSODA" if model.stiff and np.any(np.asarray(robot.Fc)[robot.joint_frames] > 0) else "RK45"
    rigid = frictionless(robot)
    lugre = isinstance(model, LuGre)
    nz = n if lugre else 0

    def command(t, q, qd):
        tau = np.asarray(torque(t, q, qd) if kind == "controller" else torque(t), dtype=float)
        if limits is not None:
            tau = np.clip(tau, -limits, limits)
        return tau

    def external(t, q, qd):
        if wrenches is None:
            return np.zeros_like(q)
        W = np.asarray(wrenches(t, q, qd), dtype=float)
        # Γ = Jᵀ W is what the joints must supply for the links to exert W; the environment's reaction on the
        # robot is −Jᵀ W ([9.91]–[9.93]); the wrench part of the recursion alone: q̇ = q̈ = 0, no gravity.
        zero = np.zeros_like(q)
        return -api.inverse_dynamics(rigid, q, zero, zero, wrenches=W, gravity=np.zeros(3))

    def friction_of(qd, z):
        return model.torque(robot, qd, z) if lugre else model.torque(robot, qd)

    def check(tau, t):
        fits = tau.ndim <= 1 and tau.size in (1, n)
        if not fits or not np.all(np.isfinite(tau)):
            what = "controller(t, q, qd)" if kind == "controller" else "torque(t)"
            raise InputError(f"{what} returned {'NaN or inf' if fits else tau.shape} at t = {t}; it must "
                             f"return {n} finite torques (N m | N) for robot '{robot.name}'")
        return tau

    if sample_time is None:
        # one evaluation before integrating, so that a callable returning the wrong shape is reported by name
        # instead of failing somewhere inside the integrator (a sampled controller is checked at every sample)
        check(command(t_eval[0], q0, qd0), t_eval[0])
    else:
        period = check_sample_time(sample_time, "sample_time")
        if isinstance(model, StickSlipFriction):
            raise InputError("sample_time with friction = StickSlipFriction: the switching model is integrated "
                             "between its own events; give 'smooth', 'lugre' or 'discontinuous' friction")
    if wrenches is not None:
        if not callable(wrenches):
            raise InputError(f"argument 'wrenches' is {type(wrenches).__name__}; give a function "
                             f"(t, q, qd) -> ({robot.nf}, 6)")
        W0 = np.asarray(wrenches(t_eval[0], q0, qd0), dtype=float)
        if W0.shape != (robot.nf, 6):
            raise InputError(f"wrenches(t, q, qd) returned shape {W0.shape}; it must return ({robot.nf}, 6): one "
                             "[f_ej; m_ej] row per frame")
    reference = getattr(torque, "reference", None) if reference is None else reference
    if reference is not None and not callable(getattr(reference, "sample", None)):
        raise InputError("argument 'reference' must have a method sample(t) -> (q, qd, qdd), e.g. QuinticReference")
    if sample_time is not None:
        if callable(getattr(torque, "reset", None)):
            torque.reset()
        result = _sampled(robot, rigid, model, command, check, external, friction_of, q0, qd0, t_eval, period,
                          method, rtol, atol, integrator, max_evaluations, nz, lugre)
    elif isinstance(model, StickSlipFriction):
        result = _stick_slip(robot, rigid, model, command, external, q0, qd0, t_eval, method, rtol, atol,
                             integrator, max_evaluations)
    else:
        result = _smooth(robot, rigid, model, command, external, friction_of, q0, qd0, t_eval, method, rtol, atol,
                         integrator, max_evaluations, nz, lugre)
    saturated = np.zeros(result.tau.shape, bool) if limits is None else np.abs(result.tau) >= limits
    q_reference = None if reference is None else np.asarray(reference.sample(result.t)[0], dtype=float)
    return dataclasses.replace(result, saturated=saturated, q_reference=q_reference)


def _state_rate(robot, rigid, model, command, external, friction_of, method, n, nz, lugre, count, max_evaluations):
    """The right-hand side ẏ(t, y) of y = [q; q̇; z; W_Γ; W_f; W_ext] (every friction model but stick–slip)."""

    def rhs(t, y):
        _evaluated(count, max_evaluations)
        q, qd, z = y[:n], y[n:2 * n], y[2 * n:2 * n + nz]
        tau = command(t, q, qd)
        tau_f = friction_of(qd, z)
        tau_e = external(t, q, qd)
        qdd = api.forward_dynamics(rigid, q, qd, tau - tau_f + tau_e, method=method)
        parts = [qd, qdd]
        if lugre:
            parts.append(model.z_rate(robot, qd, z))
        parts.append([tau @ qd, tau_f @ qd, tau_e @ qd])
        return np.concatenate(parts)

    return rhs


_SMOOTHER = ("; raise max_evaluations, loosen rtol/atol, or use a smoother friction model (SmoothFriction with a "
             "larger width) or a stiff integrator (integrator='LSODA' or 'Radau')")


def _too_many(robot, max_evaluations, t_end, advice=_SMOOTHER) -> RobodynError:
    return RobodynError(f"simulation of '{robot.name}' hit max_evaluations = {max_evaluations} right-hand-side "
                        f"evaluations before t = {t_end} s{advice}")


def _result(robot, model, method, t, y, qdd, tau, tau_f, tau_e, z, nfev, seconds) -> Simulation:
    """The :class:`Simulation` of the states y (2n + nz + 3, N) at the output times t: q and q̇ first, the three
    works last."""
    q, qd = y[:robot.n].T, y[robot.n:2 * robot.n].T
    return Simulation(
        method=method, t=t, q=q, qd=qd, qdd=qdd, nfev=int(nfev), seconds=seconds, tau=tau,
        tau_friction=tau_f, tau_external=tau_e, z=z, kinetic=kinetic_energy(robot, q, qd),
        potential=potential_energy(robot, q), work_tau=y[-3], work_friction=y[-2], work_external=y[-1],
        friction=model, robot=robot.name,
    )


def _record(robot, rigid, model, friction_of, external, method, t, y, tau, nfev, seconds, nz, lugre) -> Simulation:
    """:func:`_result` with Γ_f, Γ_ext and q̈ evaluated on the states y under the torques tau."""
    n = robot.n
    q, qd = y[:n].T, y[n:2 * n].T
    z = y[2 * n:2 * n + nz].T if lugre else None
    tau = np.broadcast_to(tau, q.shape).copy()
    tau_f, tau_e = friction_of(qd, z), external(t, q, qd)
    qdd = api.forward_dynamics(rigid, q, qd, tau - tau_f + tau_e, method=method)
    return _result(robot, model, method, t, y, qdd, tau, tau_f, tau_e, z, nfev, seconds)


def _smooth(robot, rigid, model, command, external, friction_of, q0, qd0, t_eval, method, rtol, atol, integrator,
            max_evaluations, nz, lugre) -> Simulation:
    """One solve_ivp run over the whole interval (every friction model but the switching stick–slip one)."""
    n = robot.n
    count = [0]
    rhs = _state_rate(robot, rigid, model, command, external, friction_of, method, n, nz, lugre, count,
                      max_evaluations)
    y0 = np.concatenate([q0, qd0, np.zeros(nz), np.zeros(3)])
    start = time.perf_counter()
    try:
        sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), y0, method=integrator, t_eval=t_eval, rtol=rtol, atol=atol)
    except _TooManyEvaluations:
        raise _too_many(robot, max_evaluations, t_eval[-1]) from None
    seconds = time.perf_counter() - start
    if not sol.success:
        raise RobodynError(f"simulation with method '{method}' failed: {sol.message}")
    q, qd = sol.y[:n].T, sol.y[n:2 * n].T
    return _record(robot, rigid, model, friction_of, external, method, sol.t, sol.y, command(sol.t, q, qd),
                   sol.nfev, seconds, nz, lugre)


def _sampled(robot, rigid, model, command, check, external, friction_of, q0, qd0, t_eval, period, method, rtol,
             atol, integrator, max_evaluations, nz, lugre) -> Simulation:
    """Zero-order hold: the command is evaluated once at each sample instant s_k = t_0 + k·period, in time order,
    on the state reached there, and held over [s_k, s_{k+1}); one solve_ivp run per period, so that no step of the
    integrator straddles a jump of the torque."""
    n = robot.n
    t0, t_end = t_eval[0], t_eval[-1]
    s = t0 + period * np.arange(int(np.ceil((t_end - t0) / period)) + 1)
    s = s[s < t_end - 1e-9 * period]  # a sample within 1e-9 periods of the end would hold for nothing
    bounds = np.append(s[1:], t_end)
    first = np.append(np.searchsorted(t_eval, s, side="left"), t_eval.size)  # outputs of period k: first[k:k + 2]
    count, held = [0], [None]
    rhs = _state_rate(robot, rigid, model, lambda t, q, qd: held[0], external, friction_of, method, n, nz,
                      lugre, count, max_evaluations)
    y = np.concatenate([q0, qd0, np.zeros(nz), np.zeros(3)])
    ys, taus, nfev = [], [], 0
    start = time.perf_counter()
    for k, (s_k, e_k) in enumerate(zip(s, bounds)):
        held[0] = check(command(s_k, y[:n], y[n:2 * n]), s_k)
        outs, last = t_eval[first[k]:first[k + 1]], k + 1 == len(s)
        try:  # the period's end joins its outputs: the next period starts from the state there
            sol = solve_ivp(rhs, (s_k, e_k), y, method=integrator, t_eval=outs if last else np.append(outs, e_k),
                            rtol=rtol, atol=atol)
        except _TooManyEvaluations:
            raise _too_many(robot, max_evaluations, t_end) from None
        if not sol.success:
            raise RobodynError(f"simulation with method '{method}' failed at t = {s_k:.6g} s: {sol.message}")
        nfev += sol.nfev
        ys.append(sol.y[:, :outs.size])
        taus.append(np.broadcast_to(held[0], (outs.size, n)))
        y = sol.y[:, -1]
    seconds = time.perf_counter() - start
    return _record(robot, rigid, model, friction_of, external, method, t_eval, np.concatenate(ys, axis=1),
                   np.concatenate(taus), nfev, seconds, nz, lugre)


def _stick_slip(robot, rigid, model, command, external, q0, qd0, t_eval, method, rtol, atol, integrator,
                max_evaluations) -> Simulation:
    """Piecewise integration between the switching events of :class:`StickSlipFriction`
    (docs/simulation-control.md §2). Mode of joint j: +1 or −1 sliding, 0 stuck, 2 free (no Coulomb friction)."""
    n = robot.n
    Fc, Fv, Foff = joint_column(robot, "Fc"), joint_column(robot, "Fv"), joint_column(robot, "Foff")
    Fs = breakaway_levels(robot)
    coulomb = Fs > 0
    if integrator == "auto":
        integrator = "RK45"

    def parts(t, q, qd, mode):
        """q̈ (..., n), Γ (..., n), Γ_f (..., n) with the holding friction on stuck joints, Γ_ext (..., n)."""
        tau = np.broadcast_to(command(t, q, qd), q.shape)
        tau_e = external(t, q, qd)
        strib, _ = stribeck_factor(robot, qd)
        s = np.where((mode == 2) | (mode == 0), 0.0, mode)
        tau_f = s * (Fc + strib) + Fv * qd + Foff
        drive = tau - api.inverse_dynamics(rigid, q, qd, np.zeros_like(q), method="newton_euler") + tau_e
        free, stuck = np.flatnonzero(mode != 0), np.flatnonzero(mode == 0)
        qdd = np.zeros(q.shape)
        hold = drive[..., stuck]
        if free.size:
            A = api.inertia_matrix(rigid, q)
            rhs = (drive - tau_f)[..., free]
            qdd[..., free] = np.linalg.solve(A[..., free[:, None], free], rhs[..., None])[..., 0]
            hold = hold - np.einsum("...ij,...j->...i", A[..., stuck[:, None], free], qdd[..., free])
        if stuck.size:
            tau_f = tau_f.copy()
            tau_f[..., stuck] = hold
        return qdd, tau, tau_f, tau_e

    def decide(t, q, qd, candidates, released):
        """Modes at (t, q, q̇): the candidate joints (at rest) held where friction can hold them; the joints in
        ``released`` (j -> direction) slide, they have just broken away."""
        mode = np.where(coulomb, np.sign(qd), 2).astype(float)
        mode[candidates] = 0
        for j, sign in released.items():
            mode[j] = sign
        for _ in range(n + 1):
            stuck = np.flatnonzero(mode == 0)
            if not stuck.size:
                break
            _, _, tau_f, _ = parts(t, q, np.where(mode == 0, 0.0, qd), mode)
            ratio = np.abs(tau_f[stuck]) / Fs[stuck]
            if ratio.max() <= 1.0:
                break
            j = stuck[int(np.argmax(ratio))]
            mode[j] = np.sign(tau_f[j])
        return mode

    count = [0]
    max_step = float(np.diff(t_eval).min())
    y = np.concatenate([q0, qd0, np.zeros(3)])
    candidates = np.flatnonzero(coulomb & (qd0 == 0))
    released = {}
    t_cur, nfev, switches = float(t_eval[0]), 0, 0
    outputs = []  # (t, y, mode) per segment
    done = 0  # t_eval entries already written
    start = time.perf_counter()
    while True:
        mode = decide(t_cur, y[:n], y[n:2 * n], candidates, released)
        y[n:2 * n][mode == 0] = 0.0

        def rhs(t, yy, mode=mode):
            _evaluated(count, max_evaluations)
            q, qd = yy[:n], yy[n:2 * n]
            qdd, tau, tau_f, tau_e = parts(t, q, qd, mode)
            return np.concatenate([qd, qdd, [tau @ qd, tau_f @ qd, tau_e @ qd]])

        events, meaning = [], []
        for j in np.flatnonzero((mode == 1) | (mode == -1)):
            def stop(t, yy, j=j):
                return yy[n + j]
            stop.terminal, stop.direction = True, -mode[j]
            events.append(stop)
            meaning.append(("stop", j))
        for j in np.flatnonzero(mode == 0):
            def slip(t, yy, j=j, mode=mode):
                return abs(parts(t, yy[:n], yy[n:2 * n], mode)[2][j]) - Fs[j]
            slip.terminal, slip.direction = True, 1
            events.append(slip)
            meaning.append(("slip", j))
        pending = t_eval[done:]
        try:
            # steps no longer than the output spacing, so that a switch condition that comes and goes between
            # two step ends is not stepped over (events are located between step ends)
            sol = solve_ivp(rhs, (t_cur, t_eval[-1]), y, method=integrator, t_eval=pending, rtol=rtol, atol=atol,
                            events=events or None, max_step=max_step)
        except _TooManyEvaluations:
            raise _too_many(robot, max_evaluations, t_eval[-1], f" (stick–slip model, {switches} switches); raise "
                            "max_evaluations or loosen rtol/atol") from None
        if not sol.success:
            raise RobodynError(f"simulation with method '{method}' failed: {sol.message}")
        nfev += int(sol.nfev)
        if np.size(sol.t):
            outputs.append((sol.t, sol.y, mode))
            done += sol.t.size
        if sol.status != 1:
            break
        switches += 1
        if switches > model.max_switches:
            raise RobodynError(
                f"simulation of '{robot.name}' hit max_switches = {model.max_switches} stick–slip switches before "
                f"t = {t_eval[-1]} s (at t = {t_cur:.6g} s); raise StickSlipFriction(max_switches=...) or use "
                "SmoothFriction or LuGre"
            )
        fired = [meaning[k] for k, te in enumerate(sol.t_events) if te.size]
        t_cur = float(max(te[-1] for te in sol.t_events if te.size))
        y = next(ye[-1] for ye in sol.y_events if ye.size).copy()
        stuck_now = set(np.flatnonzero(mode == 0).tolist())
        released = {}
        hold = parts(t_cur, y[:n], y[n:2 * n], mode)[2]
        for kind, j in fired:
            if kind == "stop":
                stuck_now.add(int(j))
            else:  # break-away: slide in the direction of the friction that no longer holds
                stuck_now.discard(int(j))
                released[int(j)] = float(np.sign(hold[j]))
        candidates = np.array(sorted(stuck_now), dtype=int)
        if done >= t_eval.size:  # an event after the last output time: nothing left to write
            break
    seconds = time.perf_counter() - start
    t_out, y_out = np.concatenate([o[0] for o in outputs]), np.concatenate([o[1] for o in outputs], axis=1)
    mode_out = np.concatenate([np.broadcast_to(mode, (t_seg.size, n)) for t_seg, _, mode in outputs])
    qdd, tau, tau_f, tau_e = _per_mode(parts, t_out, y_out[:n].T, y_out[n:2 * n].T, mode_out)
    return _result(robot, model, method, t_out, y_out, qdd, tau, tau_f, tau_e, None, nfev, seconds)


def _per_mode(parts, t, q, qd, modes):
    """``parts`` on the output samples, batched over the samples that share a mode vector."""
    out = [np.zeros(q.shape) for _ in range(4)]
    keys, inverse = np.unique(modes, axis=0, return_inverse=True)
    for k, mode in enumerate(keys):
        rows = np.flatnonzero(inverse.ravel() == k)
        for dst, src in zip(out, parts(t[rows], q[rows], qd[rows], mode)):
            dst[rows] = src
    return tuple(out)
