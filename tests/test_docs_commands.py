"""Every concrete ``robodyn ...`` command shown in README.md and docs/*.md runs and exits 0, as a reader types it.

A shell block (```bash, or an unlabelled block) is read line by line, each ``&&`` piece on its own (the
Quickstart's ``.venv/bin/robodyn`` counts as ``robodyn``); a piece that starts with ``robodyn`` and
holds no placeholder (an upper-case word such as ROBOT or a ``[--option]`` synopsis) is run through the CLI in an
empty folder that holds the files the pages name (``my_robot.yaml``, ``states.csv``, ``panda.urdf``).  A command
that serves until Ctrl-C (``robodyn view`` without ``--animate``) gets ``--seconds 0`` so that it returns.  The
Python blocks are run by tests/test_docs.py.
"""

from __future__ import annotations

import re
import shlex
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app

from tests.test_docs import fenced_blocks
_PLACEHOLDER = re.compile(r"\[|\b[A-Z][A-Z_]{2,}\b|\.\.\.")


def documented_commands():
    found = []
    for page, lang, block in fenced_blocks():
        if lang not in ("", "bash", "sh", "console"):
            continue
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ").split("  #")[0].split(" # ")[0]
            for command in (part.strip().removeprefix(".venv/bin/") for part in line.split("&&")):
                if command.startswith("robodyn ") and not _PLACEHOLDER.search(command):
                    found.append(pytest.param(command, id=f"{page}: {command[:60]}"))
    return found


@pytest.fixture
def reader_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    robot = rd.load("rx90")
    rd.save(robot, "my_robot.yaml")
    rd.save(rd.load("panda"), "panda.urdf")
    from tests.support.floating import URDFS  # example-robot-data's URDFs (a test extra), by file name

    if "solo12.urdf" in URDFS:  # the legged robot of docs/floating-base.md
        shutil.copy(URDFS["solo12.urdf"], "solo12.urdf")
    rng = np.random.default_rng(0)
    columns = [f"{k}{j}" for k in ("q", "qd", "qdd") for j in range(1, robot.n + 1)]
    rows = rng.uniform(-1, 1, (5, len(columns)))
    with open("states.csv", "w") as fh:
        fh.write(",".join(columns) + "\n")
        fh.writelines(",".join(f"{v:.6f}" for v in row) + "\n" for row in rows)
    return tmp_path


def test_the_pages_show_commands():
    assert len(documented_commands()) >= 10


@pytest.mark.parametrize("command", documented_commands())
def test_documented_command_runs(command, reader_folder):
    args = shlex.split(command)[1:]
    if args[0] == "view" and "--animate" not in args:
        args = [a for a in args if a != "--seconds"] + ["--seconds", "0"]
        while "600" in args:  # the value of a --seconds the page shows
            args.remove("600")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, f"{command}\n{result.output}"
