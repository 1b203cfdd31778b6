"""Rebuild the data files of this folder from a clone of github.com/Zeyu1-oss/dynamics_calibration_airbot.

    python tests/data/measured/airbot_play/make_airbot_play.py /path/to/dynamics_calibration_airbot

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  The logs are eight
excitation runs of a real AIRBOT Play (a 6-joint arm of Discover Robotics), recorded by the repository's
``state_machine_demo/csv_pvt_control.py`` while the arm tracked Fourier-series trajectories in PVT mode, in
``state_machine_demo/real_data/``: no header, 31 numbers a row at about 195 Hz: t (s), q1..q6 (rad), q̇1..q̇6
(rad/s), τ1..τ6 (N m, the drives' reported torques: current × the drive's nominal constant), then the commanded
q and q̇.  Only the recordings whose torques are unfiltered are taken (their τ moves in steps of 0.01465 N m): the
five files of the same names without "(1)" were logged through the script's causal moving average
(``--tau-filter``), which lags the torque.  They are written as one CSV (gzip, mtime 0, so the bytes are
reproducible) with the columns ``run, t, q1..q6, qd1..qd6, tau1..tau6``, every number copied as text unchanged,
the commanded columns left out.  The model is ``state_machine_demo/resources/urdf/play.urdf`` (the one the
repository identifies on), copied byte for byte.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "55aac2fcfa490c4ba3dfae5d2aea15fd2e0f138e"
RUNS = ("vali_ga_N12T25(1).csv", "vali_opt(1).csv", "vali_ptrnSrch_N7T25QR-5(1).csv",
        "vali_ptrnSrch_N7T25QR-6(1).csv", "vali_ptrnSrch_N7T25QR-7(1).csv", "vali_ptrnSrch_N8T25QR-8.csv",
        "vali_ptrnSrch_N8T25QR.csv", "vali_ptrnSrch_N8T25QR_maxq1.csv")
MODEL = "state_machine_demo/resources/urdf/play.urdf"


def blob(src: Path, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir" if (src / "HEAD").is_file() else "-C", str(src), "show",
                           f"{COMMIT}:{path}"], check=True, capture_output=True).stdout


def table(src: Path) -> bytes:
    header = ",".join(["run", "t"] + [f"{x}{j}" for x in ("q", "qd", "tau") for j in range(1, 7)])
    lines = [header]
    for k, name in enumerate(RUNS, start=1):
        for row in blob(src, f"state_machine_demo/real_data/{name}").decode().splitlines():
            if not row.strip():
                continue
            cells = row.split(",")
            if len(cells) != 31:
                raise SystemExit(f"{name}: a row of {len(cells)} numbers, not 31")
            lines.append(",".join([str(k)] + cells[:19]))
    return ("\n".join(lines) + "\n").encode()


def main(src: Path) -> None:
    runs = HERE / "airbot_play_runs.csv.gz"
    runs.write_bytes(gzip.compress(table(src), compresslevel=9, mtime=0))
    model = HERE / "play.urdf"
    model.write_bytes(blob(src, MODEL))
    for path in (runs, model):
        print(hashlib.sha256(path.read_bytes()).hexdigest(), path.name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
