"""The benchmark scripts start from any folder, as benchmarks/README.md shows them (``python benchmarks/x.py``):
a script that borrows the test suite's robots (``tests.support``) puts the repository on ``sys.path`` first, since
Python puts only the script's own folder there."""

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_scripts_that_import_tests_put_the_repository_on_the_path():
    missing = []
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        first = min((node.lineno for node in ast.walk(ast.parse(text))
                     if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests"),
                    default=None)
        if first is None:
            continue
        before = "\n".join(text.splitlines()[: first - 1])
        if not ("sys.path" in before and "parents[1]" in before):
            missing.append(path.name)
    assert not missing, f"import tests.* before putting the repository on sys.path: {missing}"


def test_a_script_runs_from_another_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_regressor.py"), "--help"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


def test_bench_threads_runs_its_kernels(tmp_path):
    """bench_threads calls the kernels' batch entry itself: a change of that entry's arguments must show here."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_threads.py"), "--sizes", "6", "--repeat",
                          "1", "--min-ms", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "answered" not in run.stdout + run.stderr
