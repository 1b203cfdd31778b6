"""``robodyn demo kozlowski-puma``: Kozłowski's spatial-operator algorithms on the PUMA 560, inverse → forward.

Kozłowski §5's experiment (six joints on fifth-order polynomials, rest to rest, 4 s, 300 samples): the torques of
the spatial-operator inverse dynamics (3.24)–(3.33) are fed to the spatial-operator forward dynamics
(3.46)–(3.58), and the accelerations that come back are compared with those put in; the inverse dynamics are
compared with Newton–Euler (Khalil & Dombre §9.5) and the two-sided form (3.1)–(3.14), the forward dynamics with
the recursive direct dynamic model (Khalil & Dombre §9.7.2).  See docs/studies.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import typer

from robodyn.cli._common import JSON_OPTION, console, get_robot, print_json, print_table, user_errors
from robodyn.cli._limits import check_work, count, number
from robodyn.cli.studies import demo_app
from robodyn.errors import InputError
from robodyn.simulation.trajectories import RestToRest

#: Kozłowski §5: the range of each joint of the PUMA 560 (rad), covered in :data:`DURATION` s by a quintic
#: rest-to-rest polynomial, q_j(t) = START_j + (END_j − START_j)(10τ³ − 15τ⁴ + 6τ⁵), τ = t / T
START = np.radians([-150.0, -90.0, -130.0, -240.0, -220.0, -150.0])
END = np.radians([150.0, 90.0, 130.0, 70.0, 40.0, 150.0])
DURATION = 4.0
#: "For each joint 300 data points were recorded"
SAMPLES = 300


@dataclass(frozen=True)
class RoundTrip:
    """Per-joint maxima over the samples of the round trip (arrays of shape (n,))."""

    tau_max: np.ndarray          # max |Γ| of the spatial-operator inverse dynamics (N m or N)
    qdd_max: np.ndarray          # max |q̈| put in (rad/s² or m/s²)
    round_trip: np.ndarray       # max |q̈_KF − q̈|: Kalman/Bryson–Frazier applied to the spatial-operator Γ
    inverse_vs_ne: np.ndarray    # max |Γ_SO − Γ_NE|
    forward_vs_rec: np.ndarray   # max |q̈_KF − q̈_rec| on the same Γ
    two_sided_vs_ne: np.ndarray  # max |Γ_(3.1)–(3.14) − Γ_NE|


def trajectory(n: int, duration: float = DURATION, samples: int = SAMPLES):
    """t (samples,), q, q̇, q̈ (samples, n) of Kozłowski's §5 trajectory (the first n joints' columns): quintic
    rest-to-rest polynomials over :data:`START` → :data:`END` in ``duration`` seconds, zero velocity and
    acceleration at both ends."""
    t = np.linspace(0.0, duration, samples)
    q, qd, qdd = RestToRest(START[:n], END[:n], duration, profile="quintic").sample(t)
    return t, q, qd, qdd


def round_trip(robot, duration: float = DURATION, samples: int = SAMPLES) -> RoundTrip:
    """Inverse → forward with Kozłowski's algorithms along :func:`trajectory`, all samples in one batch."""
    from robodyn.dynamics import api

    if robot.n > len(START):
        raise InputError(f"robot {robot.name!r} has n = {robot.n} joints; the demo trajectory has {len(START)}: "
                         f"give a robot with at most {len(START)} joints (e.g. puma560)")
    _, q, qd, qdd = trajectory(robot.n, duration, samples)
    tau = api.inverse_dynamics(robot, q, qd, qdd, method="spatial_operator")
    qdd_kf = api.forward_dynamics(robot, q, qd, tau, method="spatial_operator")
    tau_ne = api.inverse_dynamics(robot, q, qd, qdd, method="newton_euler")
    tau_2s = api.inverse_dynamics(robot, q, qd, qdd, method="two_sided")
    qdd_rec = api.forward_dynamics(robot, q, qd, tau, method="recursive")
    amax = lambda x: np.max(np.abs(x), axis=0)  # noqa: E731
    return RoundTrip(amax(tau), amax(qdd), amax(qdd_kf - qdd), amax(tau - tau_ne), amax(qdd_kf - qdd_rec),
                     amax(tau_2s - tau_ne))


def _positive_options(duration: float, samples: int) -> None:
    number(duration, "--duration", 0.0, 1e6, above=True, unit="s")
    count(samples, "--samples", 2)
    # one batch of every state: q, q̇, q̈, Γ and the recursions' per-link quantities (~200 doubles per state)
    check_work(f"demo kozlowski-puma with --samples {samples}", nbytes=8.0 * 200 * 6 * samples,
               flops=2e4 * samples, hint="give fewer --samples")


@demo_app.command("kozlowski-puma")
def kozlowski_puma_command(
    robot: str = typer.Option("puma560", help="robot with at most 6 joints: built-in name (see `robodyn list`), YAML model file or URDF"),
    duration: float = typer.Option(DURATION, help="length of the trajectory in seconds (Kozłowski: 4)"),
    samples: int = typer.Option(SAMPLES, help="states along the trajectory, evaluated in one batch (Kozłowski: 300)"),
    json_out: bool = JSON_OPTION,
) -> None:
    """Kozłowski's inverse dynamics then Kalman/Bryson–Frazier forward dynamics: round-trip error, agreement with Newton–Euler."""
    with user_errors():
        _positive_options(duration, samples)
        model = get_robot(robot)
        r = round_trip(model, duration, samples)
        rel = {"round_trip": r.round_trip.max() / r.qdd_max.max(),
               "inverse_vs_newton_euler": r.inverse_vs_ne.max() / r.tau_max.max(),
               "forward_vs_recursive": r.forward_vs_rec.max() / r.qdd_max.max(),
               "two_sided_vs_newton_euler": r.two_sided_vs_ne.max() / r.tau_max.max()}
        if json_out:
            print_json({"robot": model.name, "duration": duration, "samples": samples,
                        "tau_max": r.tau_max, "qdd_max": r.qdd_max, "round_trip": r.round_trip,
                        "inverse_vs_newton_euler": r.inverse_vs_ne, "forward_vs_recursive": r.forward_vs_rec,
                        "two_sided_vs_newton_euler": r.two_sided_vs_ne, "relative": rel})
            return
        console.print(f"{model.name}: Kozłowski's quintic motion, {samples} states over {duration:g} s, one batch; "
                      "Γ from his inverse dynamics, q̈ back from the Kalman filter + Bryson–Frazier smoother",
                      highlight=False)
        columns = (r.tau_max, r.qdd_max, r.round_trip, r.inverse_vs_ne, r.forward_vs_rec)
        print_table("joint", "max |Γ|", "max |q̈|", "round trip |Δq̈|", "|Γ − Γ_NE|", "|q̈ − q̈_rec|",
                    title="maxima over the trajectory (SI units)",
                    rows=[(str(j + 1), *(f"{v[j]:.3g}" for v in columns)) for j in range(model.n)])
        console.print(f"relative to the largest |q̈| or |Γ|: round trip {rel['round_trip']:.1e}, inverse vs "
                      f"Newton–Euler {rel['inverse_vs_newton_euler']:.1e}, forward vs recursive "
                      f"{rel['forward_vs_recursive']:.1e}, two-sided (3.1)–(3.14) vs Newton–Euler "
                      f"{rel['two_sided_vs_newton_euler']:.1e}", highlight=False)
