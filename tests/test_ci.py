"""The CI entry point (.ci/run): the README's test command verbatim, then the run against the lowest versions, which
takes each test function once (tests/conftest.py) and leaves the slow cases out, sharing one folder of compiled code
with the first run."""

from __future__ import annotations

import re
import types
from pathlib import Path

from tests.conftest import first_cases

ROOT = Path(__file__).resolve().parents[1]


def test_the_floor_run_keeps_the_first_case_of_each_test_function():
    ids = ["t.py::a[x]", "t.py::a[y]", "t.py::b", "t.py::C::a[x]", "t.py::C::a[y]", "u.py::a[x]", "t.py::a[z]"]
    items = [types.SimpleNamespace(nodeid=i) for i in ids]
    keep, drop = first_cases(items)
    assert [i.nodeid for i in keep] == ["t.py::a[x]", "t.py::b", "t.py::C::a[x]", "u.py::a[x]"]
    assert [i.nodeid for i in drop] == ["t.py::a[y]", "t.py::C::a[y]", "t.py::a[z]"]


def test_ci_runs_the_readme_command_then_the_floor_run():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"```bash\n(python3 -m venv \.venv && \.venv/bin/pip install -e '\.\[test\]' && [^\n]+)\n```",
                        readme).group(1)
    assert command in script
    floor = script.split(command, 1)[1]
    assert 'ROBODYN_TEST_FLOOR=1 .venv-lowest/bin/python -m pytest -m "not slow"' in floor
    assert script.index("export ROBODYN_TEST_CACHE") < script.index(command)  # both runs share one cache
    assert "slow:" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # the marker is registered
