"""Dynamic identification of a 7-joint robot from 10^5 samples (regressor + OLS), and the regressor throughput
next to Pinocchio's computeJointTorqueRegressor called in a Python loop.

Run:  PYTHONPATH=src:. python benchmarks/bench_identification.py [--samples 100000] [--repeat 3]

The robot is the Barrett WAM (wam7) with Coulomb and viscous friction added; the samples are random states
(q, q̇, q̈ uniform in [−2, 2]) and the torques of the model.  Before timing, the script checks that the
identification recovers the base parameters (relative error printed) and that robodyn's regressor times the
standard parameters equals Pinocchio's inverse dynamics on a few states (no friction, no rotor inertia).

BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1 unless set), like the Pinocchio loop: on a small machine
shared with other jobs, two BLAS threads contend and the matrix products slow down several times.

Measured data (held-out prediction on a real robot's log):

    PYTHONPATH=src:. python benchmarks/bench_identification.py --measured run.csv --robot ROBOT
                     [--transmission tr.yaml] [--split 0.7] [--cutoff auto|HZ] [--min-velocity V]
                     [--q-offset DQ1,...,DQn] [--reference-cutoff 25] [--reference-decimate 10,10]
                     [--reference-min-velocity V1,...,Vn]

run.csv has the columns of `robodyn identify` (docs/identification.md, "Command line"): ``t, q1..qn, tau1..taun``
(joint side) or ``t, qm1..qmn, taum1..taumn`` (motor side, with ``--transmission``), or is a joint log it reads.
The first ``split`` of the rows identifies the parameters; the rest, prepared on its own, is the held-out
validation: the script prints the relative RMS torque error per joint, 100 ‖τ − τ̂‖ / ‖τ‖ (%), and its mean,
for OLS, WLS and "physical", with and without the transmission's motor parameters, and OLS with the
parallel-filtered regressor (``parallel=data``) — the figure identification toolboxes publish for their robots'
logs.  Each row is ``robodyn identify ROBOT part1 [--transmission] --method M [--parallel] --validate part2`` at
its defaults: the same functions of ``robodyn.cli.identification`` read, prepare, identify and score (only
``--q-offset`` and the split are the script's).
No data set is shipped: bring your own log, or a public one whose licence allows it.

The last rows of the table are FIGAROH's identification pipeline (thanhndv212/figaroh-examples, Stäubli TX40
example) written with robodyn's base regressor, side by side on the same validation samples: q low-passed by a
zero-phase Butterworth of order 4 at ``--reference-cutoff`` Hz (25: the cut-off FIGAROH's TX40 example applies —
its configured 100 Hz enters ``scipy.signal.butter`` as ts f / 2, a quarter of it in units of Nyquist), q̇ and q̈
by central differences, 5 × 4 samples dropped at each end, the regressor W computed at the full rate, then W and τ
decimated together ("parallel" decimation: ``scipy.signal.decimate``, Chebyshev I, zero phase) by the factors of
``--reference-decimate`` (10,10), the rows of joint j with |q̇_j| below ``--reference-min-velocity`` (FIGAROH's
``dq_lim_def`` of the TX40) dropped, and ordinary least squares.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

import robodyn as rd  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (tests.support), from any folder
from tests.support.pin_bridge import PinRobot  # noqa: E402
from _timing import best_time  # noqa: E402



def measured(args) -> None:
    """Held-out relative torque error of the identification on a user-supplied measured log."""
    rows = measured_rows(args)
    for line in rows["header"]:
        print(line)
    print("\n| method | transmission | held-out error per joint (%) | mean (%) |\n|---|---|---|---:|")
    for label, rel in rows["rows"]:
        print(f"| {label} | " + (rel if isinstance(rel, str) else
                                 f"{', '.join(f'{x:.1f}' for x in rel)} | {rel.mean():.1f} |"))


def measured_rows(args) -> dict:
    """The rows of the --measured table: ``header`` (lines), ``rows`` ((label, per-joint error (%) or the
    IdentificationError's text)), ``results`` ({(method, with transmission, parallel): Identification}).

    Every robodyn row is what ``robodyn identify`` computes at its defaults on the identification rows, with
    ``--validate`` on the rest: the same functions (``robodyn.cli.identification``) read the file, map motor-side
    columns to the joints, prepare the samples and identify; only ``--q-offset`` and the split are added here."""
    from robodyn.cli.identification import (held_out_samples, identify_measurements, joint_side,
                                            prepare_measurements, read_data)
    from robodyn.dynamics.transmission import load_transmission

    robot = rd.load(args.robot)
    tr = None if args.transmission is None else load_transmission(args.transmission, robot.n)
    m = joint_side(read_data(Path(args.measured), robot, motor=tr is not None), tr)
    if m["t"] is None or m["qd"] is not None:
        raise SystemExit("--measured: give t, q, tau columns (raw measurements, prepared here as robodyn identify "
                         "prepares them)")
    if args.q_offset is not None:
        offset = np.broadcast_to(np.array([float(x) for x in args.q_offset.split(",")]), (robot.n,))
        m = {**m, "q": m["q"] + offset}
    cut = int(args.split * len(m["q"]))
    part = lambda rows: {**m, **{k: m[k][rows] for k in ("t", "q", "tau", "velocity")  # noqa: E731
                                 if m[k] is not None}}
    cutoff = None if args.cutoff == "auto" else float(args.cutoff)
    fit_part, val_part = part(slice(None, cut)), part(slice(cut, None))
    fits = {(parallel, with_tr): prepare_measurements(fit_part, cutoff, parallel=parallel,
                                                      transmission=tr if with_tr else None)
            for parallel in (False, True) for with_tr in {False, tr is not None}}
    fit = fits[False, False][1]
    vals = {with_tr: held_out_samples(val_part, fit.cutoff, tr if with_tr else None)
            for with_tr in {False, tr is not None}}
    val = vals[False]
    out = {"header": [f"{robot.name}: {len(m['q'])} rows; identification {fit.t.size} samples, validation "
                      f"{val.t.size} samples", fit.report()["summary"]], "rows": [], "results": {}}
    cases = [(method, with_tr, False) for method in ("ols", "wls", "physical")
             for with_tr in ([False, True] if tr is not None else [False])] + [("ols", tr is not None, True)]
    for method, with_tr, parallel in cases:
        label = f"{method}{', parallel=data' if parallel else ''} | {'yes' if with_tr else 'no'}"
        try:
            res = identify_measurements(robot, *fits[parallel, with_tr], method=method,
                                        transmission=tr if with_tr else None, min_velocity=args.min_velocity)
        except rd.identification.IdentificationError as exc:  # e.g. a joint turning one way in the 70 %
            out["rows"].append((label, f"not identified: {exc} | |"))
            continue
        out["results"][method, with_tr, parallel] = res
        out["rows"].append((label, res.validate([vals[with_tr]]).relative_rms_percent))
    if args.reference_cutoff > 0:
        res = reference_pipeline(robot, tr, m["t"][:cut], m["q"][:cut], m["tau"][:cut], args)
        err = res.base.regressor(val.q, val.qd, val.qdd) @ res.values - val.tau
        rel = 100 * np.sqrt(np.mean(err ** 2, axis=0) / np.maximum(np.mean(val.tau ** 2, axis=0), 1e-300))
        out["rows"].append((f"FIGAROH's pipeline (robodyn regressor), {args.reference_cutoff:g} Hz, decimated "
                            f"{args.reference_decimate} | {'yes' if tr is not None else 'no'}", rel))
    return out


def reference_pipeline(robot, tr, t, q, tau, args):
    """FIGAROH's TX40 identification pipeline (module documentation) on robodyn's base regressor: an object with
    ``base`` and ``values`` (OLS)."""
    from types import SimpleNamespace

    from scipy import signal

    h = float(np.mean(np.diff(t)))
    b, a = signal.butter(4, args.reference_cutoff * 2 * h)
    qf = signal.filtfilt(b, a, q, axis=0)
    qd = np.gradient(qf, h, axis=0)
    qdd = np.gradient(qd, h, axis=0)
    edge = slice(20, len(t) - 20)
    bp = rd.base_parameters(robot, friction=True, transmission=tr)
    if not bp.minimal:
        bp = rd.base_parameters(robot, method="numeric", friction=True, transmission=tr)
    W, y, v = bp.regressor(qf[edge], qd[edge], qdd[edge]), tau[edge], qd[edge]
    for r in (int(x) for x in args.reference_decimate.split(",")):
        W, y, v = (signal.decimate(x, r, zero_phase=True, axis=0) for x in (W, y, v))
    lim = np.broadcast_to(np.array([float(x) for x in args.reference_min_velocity.split(",")]), (robot.n,))
    keep = np.abs(v) >= lim
    A = np.concatenate([W[keep[:, j], j] for j in range(robot.n)])
    z = np.concatenate([y[keep[:, j], j] for j in range(robot.n)])
    scale = np.linalg.norm(A, axis=0)
    scale[scale == 0] = 1.0
    return SimpleNamespace(base=bp, values=np.linalg.lstsq(A / scale, z, rcond=None)[0] / scale)


def parser() -> argparse.ArgumentParser:
    """The command line of the script (module documentation)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pin-states", type=int, default=10_000, help="states of the Pinocchio loop")
    ap.add_argument("--measured", help="a measured CSV log (see the module documentation)")
    ap.add_argument("--robot", help="the robot of --measured (built-in name or model file)")
    ap.add_argument("--transmission", help="transmission file of --measured (motor-side columns, coupling)")
    ap.add_argument("--split", type=float, default=0.7, help="fraction of the rows used for identification")
    ap.add_argument("--cutoff", default="auto", help="low-pass cut-off (Hz) or auto")
    ap.add_argument("--min-velocity", type=float, default=None, help="rad/s, see rd.identify")
    ap.add_argument("--q-offset", default=None, help="rad added to q (comma-separated, one per joint): the "
                    "model's zero where it differs from the encoders'")
    ap.add_argument("--reference-cutoff", type=float, default=25.0,
                    help="Hz of the FIGAROH-pipeline rows of --measured (0: leave them out)")
    ap.add_argument("--reference-decimate", default="10,10", help="decimation stages of the FIGAROH pipeline")
    ap.add_argument("--reference-min-velocity", default="0.0501,0.0501,0.0750,0.0716,0.0559,0.1222",
                    help="rad/s, one or one per joint (FIGAROH's TX40 dq_lim_def)")
    return ap


def main() -> None:
    args = parser().parse_args()
    if args.measured is not None:
        if args.robot is None:
            raise SystemExit("--measured needs --robot")
        measured(args)
        return
    robot = rd.load("wam7")
    robot = robot.replace(Fc=np.full(robot.nf, 0.5), Fv=np.full(robot.nf, 0.2))
    N, n = args.samples, robot.n
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-2, 2, (3, N, n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    bp = rd.base_parameters(robot, friction=True)

    res = rd.identify(robot, q, qd, qdd, tau, method="ols", base=bp)
    err = np.max(np.abs(res.values - bp.values)) / np.max(np.abs(bp.values))
    rigid = robot.replace(Fc=np.zeros(robot.nf), Fv=np.zeros(robot.nf), Ia=np.zeros(robot.nf))
    pr = PinRobot(rigid)
    D = rd.regressor(rigid, q[:20], qd[:20], qdd[:20], friction=False)
    K = rd.parameters.standard_parameter_vector(rigid, friction=False)
    ref = np.array([pr.rnea(q[k], qd[k], qdd[k]) for k in range(20)])
    agree = np.max(np.abs(D @ K - ref)) / np.max(np.abs(ref))
    print(f"check: identified base parameters vs the model's, relative error {err:.1e}; "
          f"robodyn D K vs pin.rnea, relative difference {agree:.1e}")
    assert err < 1e-8 and agree < 1e-10

    t_id = best_time(lambda: rd.identify(robot, q, qd, qdd, tau, method="ols", base=bp), args.repeat)
    t_bp = best_time(lambda: rd.base_parameters(robot, friction=True), args.repeat)
    t_reg = best_time(lambda: [rd.regressor(robot, q[s:s + 8192], qd[s:s + 8192], qdd[s:s + 8192], friction=False)
                          for s in range(0, N, 8192)], args.repeat)
    P = min(args.pin_states, N)
    m, d = pr.model, pr.data
    t_pin = best_time(lambda: [pin.computeJointTorqueRegressor(m, d, q[k], qd[k], qdd[k]) for k in range(P)],
                 args.repeat) / P * N
    print(f"\n{robot.name}, n = {n}, {N} samples, {bp.count} base parameters (with friction)\n")
    print("| step | time (s) | µs per sample |")
    print("|---|---:|---:|")
    print(f"| rd.identify, OLS (regressor + least squares) | {t_id:.3f} | {t_id / N * 1e6:.2f} |")
    print(f"| rd.base_parameters (once per robot, not in the line above) | {t_bp:.3f} | |")
    print(f"| rd.regressor, batched in blocks of 8192, friction=False | {t_reg:.3f} | {t_reg / N * 1e6:.2f} |")
    print(f"| pin.computeJointTorqueRegressor, Python loop ({P} states, scaled to {N}) | {t_pin:.3f} | "
          f"{t_pin / N * 1e6:.2f} |")
    print(f"\nregressor throughput: robodyn {N / t_reg / 1e6:.2f} M states/s, Pinocchio loop "
          f"{N / t_pin / 1e6:.2f} M states/s (ratio Pinocchio time / robodyn time = {t_pin / t_reg:.2f}); "
          f"identification {'under' if t_id < 2 else 'OVER'} 2 s")


if __name__ == "__main__":
    main()
