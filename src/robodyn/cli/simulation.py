"""``robodyn simulate``: closed-loop simulation of a robot tracking a joint-space trajectory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from robodyn.cli._app import app
from robodyn.cli._common import Table, console, get_robot, joint_vector, print_json, user_errors
from robodyn.cli._limits import check_work, count, number

_CONTROLLERS = ("pd-gravity", "computed-torque", "passivity")
_FRICTION = ("smooth", "lugre", "stick-slip", "none")


@app.command("simulate")
def simulate_command(
    robot: str = typer.Argument(..., help="robot: built-in name (see `robodyn list`), YAML model file or URDF"),
    controller: str = typer.Option("computed-torque", help="pd-gravity | computed-torque | passivity"),
    trajectory: str = typer.Option("quintic", help="reference trajectory (quintic: rest-to-rest quintic)"),
    start: str = typer.Option(None, "--from", help="start configuration q0, comma-separated (default 0)"),
    to: str = typer.Option(..., "--to", help="goal configuration q_f, comma-separated (rad | m)"),
    duration: float = typer.Option(2.0, help="duration T of the motion (s), above 0 and at most 1e4"),
    settle: float = typer.Option(0.5, help="simulated time after the motion ends (s), 0 to 1e4"),
    kp: float = typer.Option(100.0, help="K_P (N m/rad), or Λ (1/s) for passivity; 0 to 1e6"),
    kd: float = typer.Option(20.0, help="K_D (N m s/rad); 0 to 1e6"),
    friction: str = typer.Option("smooth", help="simulation friction model: smooth | lugre | stick-slip | none"),
    width: float = typer.Option(0.01, help="width v_s of the smooth Coulomb friction tanh(q̇/v_s) (rad/s | m/s); "
                                "1e-6 to 1e3"),
    samples: int = typer.Option(201, help="output samples, 2 or more"),
    plot: Path = typer.Option(None, help="write q, q̇, Γ and the energy balance to this PNG file"),
    json_out: bool = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables."),
    degrees: bool = typer.Option(False, "--degrees", help="Revolute joints of --from and --to in degrees."),
) -> None:
    """Closed-loop simulation: PD + gravity, computed torque or Slotine–Li tracking a quintic (De Luca).

    The controller uses the robot's model and compensates its friction with the smooth model; the simulated
    robot has the chosen friction model. Prints the tracking errors and the energy balance.
    """
    from robodyn.progress import progress
    from robodyn.control import ComputedTorque, PassivityBased, PDGravity, QuinticReference
    from robodyn.dynamics.friction_models import LuGre, NoFriction, SmoothFriction, StickSlipFriction
    from robodyn.errors import InputError
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
        check_work(f"simulate with --samples {samples} (n = {model.n})", nbytes=8.0 * samples * model.n * 16,
                   hint="give fewer --samples")
        q0 = joint_vector(model, start, "--from", degrees, position=True)
        qf = joint_vector(model, to, "--to", degrees, position=True)
        ref = QuinticReference(q0, qf, duration)
        sim_friction = {"smooth": SmoothFriction(width=width), "lugre": LuGre(), "stick-slip": StickSlipFriction(),
                        "none": NoFriction()}[friction]
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

            sim = simulate(model, tracked, q0, np.zeros(model.n), t, friction=sim_friction, reference=ref)
        if plot is not None:
            sim.plot(plot)
        qr = ref.sample(sim.t)[0]
        err = np.abs(sim.q - qr)
        scale = max(1.0, np.abs(sim.work_tau).max(), np.abs(sim.work_friction).max())
        result = {
            "robot": model.name, "controller": controller, "friction": friction, "duration": duration,
            "settle": settle, "max_tracking_error": err.max(0), "final_error": np.abs(sim.q[-1] - qf),
            "max_torque": np.abs(sim.tau).max(0), "energy_balance_error": float(np.abs(sim.energy_error).max()),
            "energy_scale": scale, "rhs_evaluations": sim.nfev, "seconds": sim.seconds,
            "plot": None if plot is None else str(plot),
        }
        if json_out:
            print_json(result)
            return
        table = Table("joint", "max |q − q_d|", "final |q − q_f|", "max |Γ|",
                      title=f"{model.name}: {controller}, quintic in {duration} s + {settle} s, {friction} friction")
        for j in range(model.n):
            table.add_row(str(j + 1), f"{result['max_tracking_error'][j]:.3e}", f"{result['final_error'][j]:.3e}",
                          f"{result['max_torque'][j]:.4g}")
        console.print(table)
        console.print(f"energy balance |E − E0 − (W_Γ − W_f)| ≤ {result['energy_balance_error']:.2e} J "
                      f"(works up to {scale:.3g} J); {sim.nfev} evaluations in {sim.seconds:.2f} s")
        if plot is not None:
            console.print(f"plot written to {plot}")
