"""``robodyn demo kozlowski-puma``: Kozłowski's spatial-operator algorithms on the PUMA 560, inverse → forward.

Along a smooth joint trajectory, the torques of the spatial-operator inverse dynamics (Kozłowski (3.24)–(3.33))
are fed to the spatial-operator forward dynamics (Kalman filter (3.46)–(3.54) + Bryson–Frazier smoother
(3.55)–(3.58)); the accelerations that come back are compared with those put in (the round trip), and both
algorithms with the Newton–Euler inverse dynamics (Khalil & Dombre §9.5) and the recursive forward dynamics
(Khalil & Dombre §9.7.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import typer

from robodyn.cli._common import JSON_OPTION, Table, console, get_robot, print_json, user_errors
from robodyn.cli._limits import check_work, count, number
from robodyn.cli.studies import demo_app
from robodyn.errors import InputError

#: The trajectory q_j(t) = Q0_j + AMPLITUDE_j sin(2π t / PERIOD_j), one period per joint so that the joints
#: are not in phase (every coupling term of the model is exercised); amplitudes in rad, periods in s.
Q0 = np.array([0.0, -0.6, 0.4, 0.0, 0.8, 0.0])
AMPLITUDE = np.array([0.8, 0.5, 0.6, 1.0, 0.5, 1.2])
PERIOD = np.array([5.0, 4.0, 3.0, 2.5, 2.0, 1.5])


@dataclass(frozen=True)
class RoundTrip:
    """Per-joint maxima over the samples of the round trip (arrays of shape (n,))."""

    tau_max: np.ndarray          # max |Γ| of the spatial-operator inverse dynamics (N m or N)
    qdd_max: np.ndarray          # max |q̈| put in (rad/s² or m/s²)
    round_trip: np.ndarray       # max |q̈_KF − q̈|: Kalman/Bryson–Frazier applied to the spatial-operator Γ
    inverse_vs_ne: np.ndarray    # max |Γ_SO − Γ_NE|
    forward_vs_rec: np.ndarray   # max |q̈_KF − q̈_rec| on the same Γ


def trajectory(n: int, duration: float, samples: int):
    """t (samples,), q, q̇, q̈ (samples, n) of the demo's sinusoidal trajectory (the first n joints' columns)."""
    t = np.linspace(0.0, duration, samples)
    w = 2 * np.pi / PERIOD[:n]
    phase = np.outer(t, w)
    q = Q0[:n] + AMPLITUDE[:n] * np.sin(phase)
    qd = AMPLITUDE[:n] * w * np.cos(phase)
    qdd = -AMPLITUDE[:n] * w**2 * np.sin(phase)
    return t, q, qd, qdd


def round_trip(robot, duration: float = 5.0, samples: int = 201) -> RoundTrip:
    """Inverse → forward with Kozłowski's algorithms along :func:`trajectory`, all samples in one batch."""
    from robodyn.dynamics import api

    if robot.n > len(Q0):
        raise InputError(f"robot {robot.name!r} has n = {robot.n} joints; the demo trajectory has {len(Q0)}: "
                         f"give a robot with at most {len(Q0)} joints (e.g. puma560)")
    _, q, qd, qdd = trajectory(robot.n, duration, samples)
    tau = api.inverse_dynamics(robot, q, qd, qdd, method="spatial_operator")
    qdd_kf = api.forward_dynamics(robot, q, qd, tau, method="spatial_operator")
    tau_ne = api.inverse_dynamics(robot, q, qd, qdd, method="newton_euler")
    qdd_rec = api.forward_dynamics(robot, q, qd, tau, method="recursive")
    amax = lambda x: np.max(np.abs(x), axis=0)  # noqa: E731
    return RoundTrip(amax(tau), amax(qdd), amax(qdd_kf - qdd), amax(tau - tau_ne), amax(qdd_kf - qdd_rec))


def _positive_options(duration: float, samples: int) -> None:
    number(duration, "--duration", 0.0, 1e6, above=True, unit="s")
    count(samples, "--samples", 2)
    # one batch of every state: q, q̇, q̈, Γ and the recursions' per-link quantities (~200 doubles per state)
    check_work(f"demo kozlowski-puma with --samples {samples}", nbytes=8.0 * 200 * 6 * samples,
               flops=2e4 * samples, hint="give fewer --samples")


@demo_app.command("kozlowski-puma")
def kozlowski_puma_command(
    robot: str = typer.Option("puma560", help="robot with at most 6 joints: built-in name (see `robodyn list`), YAML model file or URDF"),
    duration: float = typer.Option(5.0, help="length of the trajectory in seconds"),
    samples: int = typer.Option(201, help="states along the trajectory, evaluated in one batch"),
    json_out: bool = JSON_OPTION,
) -> None:
    """Kozłowski's inverse dynamics then Kalman/Bryson–Frazier forward dynamics: round-trip error, agreement with Newton–Euler."""
    with user_errors():
        _positive_options(duration, samples)
        model = get_robot(robot)
        r = round_trip(model, duration, samples)
        rel = {"round_trip": r.round_trip.max() / r.qdd_max.max(),
               "inverse_vs_newton_euler": r.inverse_vs_ne.max() / r.tau_max.max(),
               "forward_vs_recursive": r.forward_vs_rec.max() / r.qdd_max.max()}
        if json_out:
            print_json({"robot": model.name, "duration": duration, "samples": samples,
                        "tau_max": r.tau_max, "qdd_max": r.qdd_max, "round_trip": r.round_trip,
                        "inverse_vs_newton_euler": r.inverse_vs_ne, "forward_vs_recursive": r.forward_vs_rec,
                        "relative": rel})
            return
        console.print(f"{model.name}: {samples} states over {duration:g} s, one batch; Γ from Kozłowski's "
                      "inverse dynamics, q̈ back from the Kalman filter + Bryson–Frazier smoother", highlight=False)
        table = Table("joint", "max |Γ|", "max |q̈|", "round trip |Δq̈|", "|Γ − Γ_NE|", "|q̈ − q̈_rec|",
                      title="maxima over the trajectory (SI units)")
        for j in range(model.n):
            table.add_row(str(j + 1), *(f"{v[j]:.3g}" for v in (r.tau_max, r.qdd_max, r.round_trip,
                                                                 r.inverse_vs_ne, r.forward_vs_rec)))
        console.print(table)
        console.print(f"relative to the largest |q̈| or |Γ|: round trip {rel['round_trip']:.1e}, inverse vs "
                      f"Newton–Euler {rel['inverse_vs_newton_euler']:.1e}, forward vs recursive "
                      f"{rel['forward_vs_recursive']:.1e}", highlight=False)
