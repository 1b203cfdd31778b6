"""Atomic output files (robodyn.files.write_atomically): all or nothing, errors that name the file."""

import os

import pytest

import robodyn as rd
from robodyn.files import write_atomically


def test_replaces_the_whole_file_or_nothing(tmp_path):
    target = tmp_path / "out.csv"
    assert write_atomically(target, lambda fh: fh.write("a,b\n1,2\n")) == target
    assert target.read_text() == "a,b\n1,2\n"

    def half_then_fail(fh):
        fh.write("x,y\n")
        raise RuntimeError("computation failed")

    with pytest.raises(RuntimeError, match="computation failed"):
        write_atomically(target, half_then_fail)
    assert target.read_text() == "a,b\n1,2\n" and os.listdir(tmp_path) == ["out.csv"]
    write_atomically(tmp_path / "b.bin", lambda fh: fh.write(b"\x89PNG"), binary=True)
    assert (tmp_path / "b.bin").read_bytes() == b"\x89PNG"


def test_errors_name_the_file_and_the_fix(tmp_path):
    with pytest.raises(rd.InputError, match=r"plot file '.*nowhere.*a\.png': folder '.*nowhere' does not exist; create it"):
        write_atomically(tmp_path / "nowhere" / "a.png", lambda fh: None, what="plot file")
    with pytest.raises(rd.InputError, match=r"model file .*: folder .* does not exist"):
        rd.save(rd.load("planar2r"), tmp_path / "nowhere" / "r.yaml")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(rd.InputError, match=r"--out .*: cannot write in folder .*locked"):
            write_atomically(locked / "t.csv", lambda fh: None, what="--out")


# ---- modes, folders, concurrency, signals (issue 13) ---------------------------------------------------------

import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from robodyn.files import MANIFEST, write_folder_atomically, write_manifest  # noqa: E402

SRC = str(Path(rd.__file__).parents[1])


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_files_respect_the_umask_and_keep_their_mode(tmp_path, umask_022):
    new = write_atomically(tmp_path / "new.csv", lambda fh: fh.write("x"))
    assert new.stat().st_mode & 0o777 == 0o644
    path = tmp_path / "r.yaml"
    path.write_text("old")
    path.chmod(0o640)
    rd.save(rd.load("planar2r"), path)
    assert path.stat().st_mode & 0o777 == 0o640 and rd.load(path).name == "planar2r"
    os.umask(0o027)
    assert write_atomically(tmp_path / "b.csv", lambda fh: fh.write("x")).stat().st_mode & 0o777 == 0o640


def _fill(files):
    def fill(folder):
        for name, text in files.items():
            (folder / name).write_text(text)
    return fill


def test_folder_rules(tmp_path, umask_022):
    out = tmp_path / "m"
    write_folder_atomically(out, _fill({"a.py": "1"}))
    assert out.stat().st_mode & 0o777 == 0o755 and (out / "a.py").stat().st_mode & 0o777 == 0o644
    with pytest.raises(rd.InputError, match="exists; choose another --out or add --force"):
        write_folder_atomically(out, _fill({"c.py": "3"}))
    write_folder_atomically(out, _fill({"b.py": "2"}), force=True)
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, "b.py"])
    (out / MANIFEST).unlink()
    with pytest.raises(rd.InputError, match="has no robodyn manifest"):
        write_folder_atomically(out, _fill({"c.py": "3"}), force=True)
    assert sorted(p.name for p in out.iterdir()) == ["b.py"]
    # a failing fill leaves the old folder and no temporary folder
    write_manifest(out)

    def failing(folder):
        (folder / "half").write_text("x")
        raise RuntimeError("generation failed")

    with pytest.raises(RuntimeError, match="generation failed"):
        write_folder_atomically(out, failing, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"] and (out / "b.py").read_text() == "2"


def test_concurrent_writers_do_not_both_succeed(tmp_path):
    out = tmp_path / "m"
    results = []

    def writer(k):
        def fill(folder):
            time.sleep(0.2)
            _fill({f"w{k}.txt": str(k)})(folder)
        try:
            write_folder_atomically(out, fill)
            results.append(k)
        except rd.InputError:
            results.append(None)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [k for k in results if k is not None]
    assert len(winners) == 1 and sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, f"w{winners[0]}.txt"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("kind", ["folder", "file"])
def test_sigterm_leaves_no_temporary_files(tmp_path, kind):
    script = f"""
import sys, time
sys.path.insert(0, {SRC!r})
from pathlib import Path
from robodyn.files import write_atomically, write_folder_atomically
def fill(folder):
    (folder / "part").write_text("x")
    print("ready", flush=True)
    time.sleep(30)
def write(fh):
    fh.write("x")
    fh.flush()
    print("ready", flush=True)
    time.sleep(30)
if {kind!r} == "folder":
    write_folder_atomically(Path({str(tmp_path / 'm')!r}), fill)
else:
    write_atomically(Path({str(tmp_path / 'f.csv')!r}), write)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    assert len(list(tmp_path.iterdir())) == 1  # the temporary file or folder
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 143
    assert list(tmp_path.iterdir()) == []
