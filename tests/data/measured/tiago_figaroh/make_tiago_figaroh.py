"""Rebuild the data files of this folder from a clone of FIGAROH's examples (github.com/thanhndv212/figaroh-examples).

    python tests/data/measured/tiago_figaroh/make_tiago_figaroh.py /path/to/figaroh-examples

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  From commit ``c0b5c7f``
(2025-09-05) it joins the TIAGo logs ``examples/tiago/data/identification/dynamic/tiago_{position,velocity,effort}.csv``
row by row under one header (the three files share their time column, checked here as text), every number copied
as text unchanged, gzip-compressed with mtime 0 (so the bytes are reproducible); and copies the model
``examples/tiago/urdf/tiago_48_schunk.urdf`` (the one FIGAROH's ``examples/tiago/identification.py`` identifies
this log with) byte for byte.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "c0b5c7f0fda10078be55104f9ee76ac106b7a5ee"
LOGS = "examples/tiago/data/identification/dynamic/tiago_{}.csv"
MODEL = "examples/tiago/urdf/tiago_48_schunk.urdf"
JOINTS = 8  # torso_lift_joint, arm_1_joint ... arm_7_joint


def blob(src: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(src), "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout


def main(src: Path) -> None:
    rows = {kind: blob(src, LOGS.format(kind)).decode("ascii").splitlines()
            for kind in ("position", "velocity", "effort")}
    count = {len(r) for r in rows.values()}
    if len(count) != 1:
        raise SystemExit(f"the three logs differ in length: {count}")
    header = ",".join(["t"] + [f"{key}{j}" for key in ("q", "qd", "effort") for j in range(1, JOINTS + 1)])
    lines = [header]
    for p, v, e in zip(*(r[1:] for r in rows.values())):
        fields = [line.split(",") for line in (p, v, e)]
        if not (fields[0][0] == fields[1][0] == fields[2][0]) or any(len(f) != JOINTS + 1 for f in fields):
            raise SystemExit(f"rows do not match: {p!r} / {v!r} / {e!r}")
        lines.append(",".join([fields[0][0]] + fields[0][1:] + fields[1][1:] + fields[2][1:]))
    out = HERE / "tiago_run.csv.gz"
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as z:
        z.write(("\n".join(lines) + "\n").encode("ascii"))
    (HERE / "tiago_48_schunk.urdf").write_bytes(blob(src, MODEL))
    for name in (out.name, "tiago_48_schunk.urdf"):
        print(hashlib.sha256((HERE / name).read_bytes()).hexdigest(), name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(Path(sys.argv[1]))
