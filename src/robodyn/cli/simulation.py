"""``robodyn simulate``: closed-loop simulation of a robot tracking a joint-space trajectory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from robodyn.cli._app import app
from robodyn.cli._common import (JSON_OPTION, SPAN_OPTION, check_outputs, console, get_robot, joint_vector,
                                parse_span, print_json, print_table, read_log, robot_file, user_errors)
from robodyn.cli._limits import check_work, count, number
from robodyn.errors import InputError

_CONTROLLERS = ("pd-gravity", "computed-torque", "passivity")
_FRICTION = ("smooth", "lugre", "stick-slip", "none")


@app.command("simulate")
def simulate_command(
    robot: str = typer.Argument(..., help="robot: built-in name (see `robodyn list`), YAML model file or URDF"),
    controller: str = typer.Option("computed-torque", help="pd-gravity | computed-torque | passivity"),
    trajectory: str = typer.Option("quintic", help="reference trajectory (quintic: rest-to-rest quintic)"),
    start: str = typer.Option(None, "--from", help="start configuration q0, comma-separated (default 0)"),
    to: str = typer.Option(None, "--to", help="goal configuration q_f, comma-separated (rad | m); required "
                                               "unless --compare"),
    duration: float = typer.Option(2.0, help="duration T of the motion (s), above 0 and at most 1e4"),
    settle: float = typer.Option(0.5, help="simulated time after the motion ends (s), 0 to 1e4"),
    kp: float = typer.Option(100.0, help="K_P (N m/rad), or Λ (1/s) for passivity; 0 to 1e6"),
    kd: float = typer.Option(20.0, help="K_D (N m s/rad); 0 to 1e6"),
    friction: str = typer.Option("smooth", help="simulation friction model: smooth | lugre | stick-slip | none"),
    width: float = typer.Option(0.01, help="width v_s of the smooth Coulomb friction tanh(q̇/v_s) (rad/s | m/s); "
                                "1e-6 to 1e3"),
    samples: int = typer.Option(201, help="output samples, 2 or more"),
    saturate: bool = typer.Option(True, "--saturate/--no-saturate",
                                  help="clip the controller's torque at the robot's limits taulim (N m | N), as its "
                                       "drives do (default); --no-saturate applies it as commanded"),
    plot: Path = typer.Option(None, help="write q, q̇, Γ and the energy balance to this PNG file"),
    json_out: bool = JSON_OPTION,
    degrees: bool = typer.Option(False, "--degrees", help="Revolute joints of --from and --to in degrees."),
    compare: Path = typer.Option(None, "--compare", help="Replay a measured run instead: a joint log (ROS 1/2 bag, "
                                 "HDF5, Parquet or CSV t, q1..qn, tau1..taun; see docs/logs.md) whose efforts drive "
                                 "the model open loop from the log's first state; prints the RMS of q error."),
    topic: str = typer.Option("/joint_states", "--topic", help="With --compare and a ROS bag: the JointState topic."),
    span: str = SPAN_OPTION,
) -> None:
    """Closed-loop simulation: PD + gravity, computed torque or Slotine–Li tracking a quintic (De Luca).

    The controller uses the robot's model and compensates its friction with the smooth model; the simulated
    robot has the chosen friction model, and its drives clip the torque at the robot's limits (taulim) unless
    --no-saturate. Prints the tracking errors, the samples at a torque limit and the energy balance.

    With --compare LOG: no controller; the log's efforts (linearly interpolated in time) drive the model with
    the chosen friction model from the log's first position and velocity, and the simulated q is compared with
    the measured q at the log's times.
    """
    from robodyn.progress import progress
    from robodyn.control import ComputedTorque, PassivityBased, PDGravity, QuinticReference
    from robodyn.dynamics.friction_models import NoFriction, SmoothFriction
    from robodyn.simulation import simulate

    with user_errors():
        model = get_robot(robot)
        if controller not in _CONTROLLERS:
            raise InputError(f"--controller {controller!r}; choose one of {', '.join(_CONTROLLERS)}")
        if trajectory != "quintic":
            raise InputError(f"--trajectory {trajectory!r}; the available trajectory is 'quintic'")
        if friction not in _FRICTION:
            raise InputError(f"--friction {friction!r}; choose one of {', '.join(_FRICTION)}")
        # the integrator's steps grow with the simulated time, the gains (stiffness) and 1/width: bounded, so
        # that no value makes a step overflow (1e300 s) or the run endless
        number(duration, "--duration", 0.0, 1e4, above=True, unit="s")
        number(settle, "--settle", 0.0, 1e4, unit="s")
        number(kp, "--kp", 0.0, 1e6)
        number(kd, "--kd", 0.0, 1e6)
        number(width, "--width", 1e-6, 1e3)
        count(samples, "--samples", 2)
        check_outputs(("--plot", plot), inputs=[("ROBOT model file", robot_file(robot)), ("--compare log", compare)])
        sim_friction = _friction_model(friction, width)
        if compare is not None:
            given = [option for option, value in (("--from", start), ("--to", to)) if value is not None]
            if given:
                raise InputError(f"{' and '.join(given)} set the reference of a controller; --compare replays the "
                                 "log's torques from its first state instead: leave them out")
            return _compare_command(model, compare, topic, sim_friction, friction, plot, json_out, parse_span(span))
        if span is not None:
            raise InputError("--span reads part of the --compare log; give --compare LOG, or leave --span out")
        if to is None:
            raise InputError("give the goal configuration --to (rad | m), or a measured run --compare LOG")
        check_work(f"simulate with --samples {samples} (n = {model.n})", nbytes=8.0 * samples * model.n * 16,
                   hint="give fewer --samples")
        q0 = joint_vector(model, start, "--from", degrees, position=True)
        qf = joint_vector(model, to, "--to", degrees, position=True)
        ref = QuinticReference(q0, qf, duration)
        comp = NoFriction() if friction == "none" else SmoothFriction(width=width)
        ctl = {"pd-gravity": PDGravity, "computed-torque": ComputedTorque, "passivity": PassivityBased}[controller](
            model, kp, kd, ref, friction=comp)
        t_end = duration + settle
        t = np.linspace(0.0, t_end, samples)
        with progress(f"simulating {model.name} ({controller})", total=100) as bar:
            def tracked(tt, q, qd):
                if np.ndim(tt) == 0:
                    bar.update(completed=100 * float(tt) / t_end)
                return ctl(tt, q, qd)

            sim = simulate(model, tracked, q0, np.zeros(model.n), t, friction=sim_friction, reference=ref,
                           saturate=saturate)
        if plot is not None:
            sim.plot(plot)
        qr = ref.sample(sim.t)[0]
        err = np.abs(sim.q - qr)
        scale = max(1.0, np.abs(sim.work_tau).max(), np.abs(sim.work_friction).max())
        result = {"robot": model.name, "controller": controller, "friction": friction, "duration": duration,
                  "settle": settle, "max_tracking_error": err.max(0), "final_error": np.abs(sim.q[-1] - qf),
                  "max_torque": np.abs(sim.tau).max(0), "saturated_samples": sim.saturated.sum(0),
                  "energy_balance_error": float(np.abs(sim.energy_error).max()), "energy_scale": scale,
                  "rhs_evaluations": sim.nfev, "seconds": sim.seconds, "plot": None if plot is None else str(plot)}
        if json_out:
            print_json(result)
            return
        print_table("joint", "max |q − q_d|", "final |q − q_f|", "max |Γ|", "at limit",
                    title=f"{model.name}: {controller}, quintic in {duration} s + {settle} s, {friction} friction",
                    rows=[(str(j + 1), f"{result['max_tracking_error'][j]:.3e}", f"{result['final_error'][j]:.3e}",
                           f"{result['max_torque'][j]:.4g}", f"{result['saturated_samples'][j]}/{samples}")
                          for j in range(model.n)])
        console.print(f"energy balance |E − E0 − (W_Γ − W_f)| ≤ {result['energy_balance_error']:.2e} J "
                      f"(works up to {scale:.3g} J); {sim.nfev} evaluations in {sim.seconds:.2f} s")
        if plot is not None:
            console.print(f"plot written to {plot}")


#: time step (s) an integrator needs to follow a robot arm's motion under gravity and its torques: the work
#: estimate of ``--compare`` counts at least one step per log sample and one per this interval of the log
_MOTION_TIME_STEP = 0.01
#: floating-point operations of one right-hand-side evaluation of the replay, per joint (Python overhead included)
_FLOPS_PER_EVALUATION = 1e5


class _Diverged(Exception):
    """The replay left the measured motion (raised inside the integrator, caught by ``_compare_command``)."""

    def __init__(self, t: float, joint: int, error: float):
        super().__init__(t, joint, error)
        self.t, self.joint, self.error = t, joint, error


def _friction_model(name: str, width: float):
    from robodyn.dynamics.friction_models import LuGre, NoFriction, SmoothFriction, StickSlipFriction

    return {"smooth": SmoothFriction(width=width), "lugre": LuGre(), "stick-slip": StickSlipFriction(),
            "none": NoFriction()}[name]


def _compare_command(model, path: Path, topic: str, sim_friction, friction: str, plot: Path | None,
                     json_out: bool, span=None) -> None:
    """``simulate --compare LOG``: the model driven open loop by the log's efforts, against the log's q.

    A closed-loop rerun would mostly show the controller (any model tracks a reference once the loop is closed);
    replaying the measured torques Γ(t) shows the model itself: q(t) integrated from the direct dynamic model
    (Khalil & Dombre [9.96]) from the measured q(0), q̇(0) (q̇(0) from the log's velocities, else the
    second-order one-sided difference of q), Γ linearly interpolated between the samples.  Model errors grow
    with time in open loop: compare short runs.  The replay stops when it diverges — a joint's error beyond the
    range of its measured motion (at least 1 rad | m) — and says so in one line; the errors then cover the
    samples before.  A log whose duration needs more integration work than the command-line limits allow
    (at least one step per sample and per 0.01 s) is refused before integrating.
    """
    from robodyn.files import save_figure
    from robodyn import plot as figures
    from robodyn.progress import progress
    from robodyn.sanitize import figure_text
    from robodyn.simulation import simulate

    log = read_log(path, model, topic, "simulate --compare", span)
    if log.samples < 3:
        raise InputError(f"--compare {path}: {log.samples} samples; the replay needs at least 3")
    duration = float(log.t[-1] - log.t[0])
    evaluations = 6.0 * max(log.samples, duration / _MOTION_TIME_STEP)
    check_work(f"simulate --compare ({log.samples} samples over {duration:.4g} s, n = {model.n})",
               nbytes=8.0 * log.samples * model.n * 16, flops=evaluations * _FLOPS_PER_EVALUATION * model.n,
               hint="give a shorter log")
    t, tau = log.t, log.tau
    qd0 = log.qd[0] if log.qd is not None else np.gradient(log.q[:3], t[:3], axis=0, edge_order=2)[0]
    # diverged: a joint's error exceeds the range of its measured motion (at least 1 rad | m); the replay stops
    # there instead of integrating a runaway motion to the end of the log
    bound = np.maximum(np.ptp(log.q, axis=0), 1.0)

    def replay(times, watch):
        with progress(f"replaying {times.size} samples on {model.name}", total=100) as bar:
            def torque(tt, q, qd):  # the measured torques, linearly interpolated; open loop
                if np.ndim(tt) == 0:
                    bar.update(completed=100 * float(tt - times[0]) / (times[-1] - times[0]))
                if watch:
                    gap = np.abs(q - np.stack([np.interp(tt, t, log.q[:, j]) for j in range(model.n)], axis=-1))
                    if np.any(gap > bound):
                        j = int(np.argmax(np.max(np.reshape(gap / bound, (-1, model.n)), axis=0)))
                        raise _Diverged(float(np.max(tt)), j, float(np.max(np.reshape(gap, (-1, model.n))[:, j])))
                return np.stack([np.interp(tt, t, tau[:, j]) for j in range(model.n)], axis=-1)

            # the measured efforts are what the drives applied: replayed as they are, never clipped at taulim
            return simulate(model, torque, log.q[0], qd0, times, friction=sim_friction, saturate=False)

    diverged = None
    try:
        sim = replay(t, watch=True)
    except _Diverged as stop:
        diverged = stop
        keep = max(2, int(np.searchsorted(t, stop.t, side="left")))
        sim = replay(t[:keep], watch=False)
    t, measured = sim.t, log.q[: sim.t.size]
    error = sim.q - measured
    rms = np.sqrt(np.mean(error ** 2, axis=0))
    worst = np.abs(error).max(axis=0)
    if plot is not None:
        fig = figures.identification(t, log.q, sim.q, names=model.q_names,
                                     title=f"{model.name}: measured q and the model driven by the measured torques")
        for ax, name, r in zip(fig.axes, model.q_names, rms):
            ax.set_ylabel("position (rad | m)")
            ax.set_title(f"{figure_text(name)}: RMS error {r:.3g} rad | m", fontsize="medium")
            for line, label in zip(ax.get_lines(), ("measured", "simulated")):
                line.set_label(label)
        fig.axes[0].legend(loc="best", fontsize="small")
        save_figure(fig, plot)
    result = {"robot": model.name, "compare": str(path), "friction": friction, "samples": log.samples,
              "duration": float(t[-1]), "time_source": log.time_source, "rms_error": rms, "max_error": worst,
              "rhs_evaluations": sim.nfev, "seconds": sim.seconds, "plot": None if plot is None else str(plot),
              "diverged": diverged is not None, "compared_samples": int(t.size),
              "diverged_at": None if diverged is None else diverged.t}
    if json_out:
        print_json(result)
        return
    print_table("joint", "RMS |q − q_meas|", "max |q − q_meas|",
                title=f"{model.name} driven by the torques of {path} ({log.samples} samples, "
                      f"{t[-1]:.4g} s), {friction} friction",
                rows=[(model.q_names[j], f"{rms[j]:.3e}", f"{worst[j]:.3e}") for j in range(model.n)])
    console.print(f"rad | m; {sim.nfev} evaluations in {sim.seconds:.2f} s")
    if diverged is not None:
        console.print(f"diverged: at t = {diverged.t:.4g} s the model's {model.q_names[diverged.joint]} is "
                      f"{diverged.error:.3g} rad | m from the measured one (beyond the range of its measured "
                      f"motion); the table covers the {t.size} samples before, not the {log.samples} of the log",
                      highlight=False, soft_wrap=True)
    if plot is not None:
        console.print(f"plot written to {plot}")
