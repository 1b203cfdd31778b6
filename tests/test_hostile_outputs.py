"""Hostile outputs (issue 25): --force replaces only what robodyn wrote, special files are never replaced, killed
runs leave no temporaries for good, model-file names cannot inject Markdown/HTML or Matplotlib math text, and the
compile cache is used only when this user alone can write it."""

import hashlib
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import robodyn as rd
from robodyn.files import MANIFEST, remove_stale_temporaries, write_atomically, write_folder_atomically
from robodyn.cli import app
from robodyn.robots import __file__ as _robots_init
from tests.support.kernels import needs_compiler

runner = CliRunner()
SRC = str(Path(rd.__file__).parents[1])
PLANAR2R = (Path(_robots_init).parent / "planar2r.yaml").read_text()
needs_cc = needs_compiler
posix = pytest.mark.skipif(os.name != "posix", reason="POSIX files and signals")
root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root (mknod, chown)")


def _tree(folder: Path) -> dict:
    """{relative path: bytes or kind} of everything under ``folder``."""
    out = {}
    for p in sorted(folder.rglob("*")):
        out[str(p.relative_to(folder))] = p.read_bytes() if p.is_file() and not p.is_symlink() else "other"
    return out


def _generate(out: Path, *extra: str):
    return runner.invoke(app, ["generate", "planar2r", "--models", "gra", "--lang", "python", "--out", str(out), *extra])


def model_file(folder: Path, name, joint="j1", source=None) -> Path:
    text = PLANAR2R.replace("name: planar2r", f"name: {json.dumps(name)}", 1)
    text = text.replace("{name: j1,", f"{{name: {json.dumps(joint)},", 1)
    if source is not None:
        text = re.sub(r"^source: .*$", f"source: {json.dumps(source)}", text, count=1, flags=re.M)
    path = folder / "robot.yaml"
    path.write_text(text)
    return path


# ---- 1. --force replaces only what robodyn wrote ---------------------------------------------------------------

def test_generated_folder_holds_a_manifest_of_every_file(tmp_path):
    out = tmp_path / "m"
    assert _generate(out).exit_code == 0
    lines = (out / MANIFEST).read_text().splitlines()
    assert lines[0].startswith("# robodyn manifest")
    listed = dict(reversed(line.split("  ", 1)) for line in lines[1:])
    assert sorted(listed) == sorted(p.name for p in out.iterdir() if p.name != MANIFEST)
    assert all(hashlib.sha256((out / n).read_bytes()).hexdigest() == h for n, h in listed.items())
    if shutil.which("sha256sum"):  # the format of sha256sum -c
        assert subprocess.run(["sha256sum", "--quiet", "-c", MANIFEST], cwd=out).returncode == 0
    assert _generate(out, "--force").exit_code == 0  # unchanged: replaced


@pytest.mark.parametrize("case", ["added file", "added folder", "changed file", "no manifest", "old robodyn"])
def test_force_refuses_folders_with_foreign_or_changed_files(tmp_path, case):
    out = tmp_path / "m"
    assert _generate(out).exit_code == 0
    if case == "added file":
        (out / "my_notes.txt").write_text("a week of work")
    elif case == "added folder":
        (out / "results").mkdir()
        (out / "results" / "fit.csv").write_text("1,2")
    elif case == "changed file":
        (out / "planar2r_gra.py").write_text((out / "planar2r_gra.py").read_text() + "# tuned by hand\n")
    elif case == "no manifest":
        (out / MANIFEST).unlink()
    else:  # a folder of an older robodyn: operations.json, no manifest, and the user's file
        (out / MANIFEST).unlink()
        (out / "my_notes.txt").write_text("a week of work")
    before = _tree(tmp_path)
    res = _generate(out, "--force")
    assert res.exit_code == 2, res.output
    assert res.output.count("\n") == 1 and res.output.startswith("error:")
    expected = {"added file": "did not write: 'my_notes.txt'", "added folder": "did not write: 'results'",
                "changed file": "changed since robodyn wrote them: 'planar2r_gra.py'",
                "no manifest": "no robodyn manifest", "old robodyn": "no robodyn manifest"}[case]
    assert expected in res.output
    assert _tree(tmp_path) == before  # nothing written or deleted


def test_force_api_error_names_every_kind(tmp_path):
    out = tmp_path / "m"
    write_folder_atomically(out, lambda f: [(f / n).write_text(n) for n in ("a.py", "b.py")])
    (out / "a.py").write_text("changed")
    (out / "zz.txt").write_text("mine")
    with pytest.raises(rd.InputError, match=r"files robodyn did not write: 'zz.txt'; files changed since robodyn "
                                            r"wrote them: 'a.py'; --force replaces only what robodyn wrote"):
        write_folder_atomically(out, lambda f: (f / "c.py").write_text("c"), force=True)
    (out / "zz.txt").unlink()
    (out / "a.py").write_text("a.py")
    (out / "b.py").unlink()  # a file robodyn wrote and the user deleted: nothing of theirs is lost
    write_folder_atomically(out, lambda f: (f / "c.py").write_text("c"), force=True)
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, "c.py"])


# ---- 2. device nodes, FIFOs, sockets: never replaced -----------------------------------------------------------

@posix
def test_fifo_without_reader_is_an_error_not_a_hang(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(rd.InputError, match=r"--out .*pipe.*cannot write into it \(a FIFO that no process reads\)"):
        write_atomically(fifo, lambda fh: fh.write("x"), what="--out")
    assert time.monotonic() - start < 5 and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


@posix
def test_fifo_with_reader_is_written_into(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        rd.save(rd.load("planar2r"), fifo)
        assert rd.loads(os.read(reader, 1 << 16).decode()).name == "planar2r"
        rd.plot.torques([0.0, 1.0], [[1.0, 2.0], [3.0, 4.0]], path=link)  # through a link
        data = b""
        while chunk := _read_available(reader):
            data += chunk
        assert data.startswith(b"\x89PNG")

        def failing(fh):
            fh.write("half")
            raise RuntimeError("computation failed")

        with pytest.raises(RuntimeError, match="computation failed"):
            write_atomically(fifo, failing)
        assert _read_available(reader) == b""  # nothing written on error
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.path.islink(link)
    assert sorted(os.listdir(tmp_path)) == ["link", "pipe"]


def _read_available(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 20)
    except BlockingIOError:
        return b""


@posix
def test_socket_is_refused(tmp_path):
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as s:
        try:
            s.bind(str(path))
        except OSError:
            pytest.skip("path too long for a socket")
        with pytest.raises(rd.InputError, match=r"plot file .*/s' is a socket; it is left untouched"):
            rd.plot.torques([0.0, 1.0], [1.0, 2.0], path=path)
        assert stat.S_ISSOCK(os.lstat(path).st_mode)


@root
def test_character_device_is_written_into_not_replaced(tmp_path):
    """A copy of /dev/null (same device numbers) in tmp_path: the system's own /dev/null is never at risk."""
    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        with open(null, "w") as fh:
            fh.write("x")
    except OSError:
        pytest.skip("no device nodes here (nodev mount)")
    rd.save(rd.load("planar2r"), null)
    rd.plot.torques([0.0, 1.0], [1.0, 2.0], path=null)
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert os.listdir(tmp_path) == ["null"]
    # and the system's /dev/null, proven above to be written into, stays a character device
    rd.save(rd.load("planar2r"), "/dev/null")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


@posix
def test_cli_checks_every_output_before_writing_any(tmp_path):
    poses = tmp_path / "poses.csv"
    assert runner.invoke(app, ["calibration-poses", "planar2r", "--count", "6", "--unlimited", "--out", str(poses)]).exit_code == 0
    import numpy as np

    q = np.loadtxt(poses, delimiter=",", skiprows=1)
    tau = rd.gravity_torques(rd.load("planar2r"), q)
    data = tmp_path / "data.csv"
    data.write_text("q1,q2,tau1,tau2\n" + "".join(",".join(repr(float(x)) for x in row) + "\n" for row in np.hstack([q, tau])))
    sock = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as s:
        try:
            s.bind(str(sock))
        except OSError:
            pytest.skip("path too long for a socket")
        res = runner.invoke(app, ["calibrate-gravity", "planar2r", str(data), "--plot", str(tmp_path / "p.png"),
                                  "--out", str(sock)])
        assert res.exit_code == 2 and "--out" in res.output and "is a socket" in res.output, res.output
        assert not (tmp_path / "p.png").exists()


@root
def test_block_device_is_refused(tmp_path):
    blk = tmp_path / "blk"
    try:
        os.mknod(blk, 0o600 | stat.S_IFBLK, os.makedev(7, 200))
    except OSError:
        pytest.skip("cannot make device nodes here")
    with pytest.raises(rd.InputError, match="is a block device; it is left untouched"):
        rd.save(rd.load("planar2r"), blk)
    assert stat.S_ISBLK(os.lstat(blk).st_mode)


# ---- 11. temporaries of killed runs ----------------------------------------------------------------------------

_KILLED = """
import sys, time
sys.path.insert(0, {src!r})
from pathlib import Path
from robodyn.files import write_atomically, write_folder_atomically
def fill(folder):
    (folder / "part").write_text("x")
    print("ready", flush=True)
    time.sleep(60)
def write(fh):
    fh.write("x")
    fh.flush()
    print("ready", flush=True)
    time.sleep(60)
if {kind!r} == "folder":
    write_folder_atomically(Path({target!r}), fill)
else:
    write_atomically(Path({target!r}), write)
"""


@posix
@pytest.mark.parametrize("kind", ["folder", "file"])
def test_sigkill_leftovers_are_removed_by_the_next_run(tmp_path, kind):
    target = tmp_path / ("m" if kind == "folder" else "f.csv")
    proc = subprocess.Popen([sys.executable, "-c", _KILLED.format(src=SRC, kind=kind, target=str(target))],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.kill()
    proc.wait(timeout=20)
    (left,) = os.listdir(tmp_path)
    assert left.startswith(f".{target.name}.robodyn-") and left.endswith(".tmp")
    # look-alikes that are not a dead robodyn process's of this host: left alone
    mine_alive = tmp_path / (left.rsplit("-", 2)[0] + f"-{os.getpid()}-abcdefgh.tmp")
    other_host = tmp_path / f".{target.name}.robodyn-00000000-{proc.pid}-abcdefgh.tmp"
    old_style = tmp_path / f".{target.name}.k3j4h5l6.tmp"
    for p in (mine_alive, other_host, old_style):
        p.mkdir()
    if kind == "folder":
        write_folder_atomically(target, lambda f: (f / "a.py").write_text("1"))
    else:
        write_atomically(target, lambda fh: fh.write("1"))
    assert sorted(os.listdir(tmp_path)) == sorted([target.name, mine_alive.name, other_host.name, old_style.name])
    assert remove_stale_temporaries(tmp_path, target.name) == []


@posix
def test_long_names_still_fit(tmp_path):
    target = tmp_path / ("x" * 240 + ".csv")
    write_atomically(target, lambda fh: fh.write("1"))
    write_folder_atomically(tmp_path / ("y" * 250), lambda f: (f / "a").write_text("1"))
    assert sorted(len(p) for p in os.listdir(tmp_path)) == [244, 250]


# ---- 11. names from model files in README.md and figures --------------------------------------------------------

XSS = '<img src=x onerror="alert(1)"> [click](javascript:alert(2)) <script>alert(3)</script> &lt; `x` **b**'


def test_readme_escapes_markdown_and_html(tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    path = model_file(tmp_path, XSS, source=XSS)
    out = tmp_path / "m"
    res = runner.invoke(app, ["generate", str(path), "--models", "gra", "--lang", "python", "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = (out / "README.md").read_text()
    assert re.search(r"(?<!\\)<(img|script)", text) is None
    for html in (markdown_it.MarkdownIt("commonmark").render(text), markdown_it.MarkdownIt("gfm-like", {"linkify": False}).render(text)):
        assert "<img" not in html and "<script" not in html and "<a " not in html and "<strong>" not in html
        assert "<code>x" not in html and "&lt;img src=x onerror=_alert(1)_&gt;" in html


def test_markdown_sanitiser():
    from robodyn.sanitize import comment, markdown

    assert markdown("PUMA 560") == "PUMA 560"
    assert markdown("<b>a_b</b>") == r"\<b\>a\_b\<\/b\>"
    for text in (XSS, "a\\b", "|x|y|", "# h", "*", "[x]: http://e"):
        m = markdown(text)
        assert re.fullmatch(r"([A-Za-z0-9 ]|\\[!-/:-@\[-`{-~])*", m) and m.replace("\\", "") == comment(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60) | st.text(alphabet="<>&*_`[]()!#|~\\ -=a", max_size=40))
def test_markdown_renders_as_the_comment_text(text):
    """CommonMark shows markdown(text) as exactly comment(text): no markup of any kind."""
    import html

    markdown_it = pytest.importorskip("markdown_it")
    from robodyn.sanitize import comment, markdown

    rendered = markdown_it.MarkdownIt("commonmark").render(markdown(text)).strip()
    expected = comment(text)
    assert rendered == (f"<p>{html.escape(expected, quote=False)}</p>" if expected else "")


MATH = r"$\frac{$"


def test_figure_text_is_never_math():
    from matplotlib.figure import Figure

    from robodyn.sanitize import figure_text

    for name in (MATH, "a$b", "$x$", "\\$x$", r"a\$b", "$$", "cost $5 and $6"):
        fig = Figure()
        fig.suptitle(figure_text(name))
        fig.canvas.draw()  # would raise ValueError on bad math text
        assert fig._suptitle.get_text() == figure_text(name)


def test_math_text_names_do_not_break_plots(tmp_path):
    robot = rd.load(model_file(tmp_path, MATH, joint=MATH))
    rd.plot.workspace(robot, samples=20, frame=1, path=tmp_path / "w.png")
    rd.plot.ellipsoids(robot, [0.1, 0.2], frame=1, path=tmp_path / "e.png")
    assert (tmp_path / "w.png").read_bytes().startswith(b"\x89PNG")
    fig = rd.plot.torques([0.0, 1.0], [[1.0, 2.0], [3.0, 4.0]], names=robot.q_names, path=tmp_path / "t.png")
    assert fig.axes[0].get_legend().get_texts()[0].get_text() == "\\$\\frac{\\$"


def test_math_text_robot_name_in_cli_plots(tmp_path):
    path = model_file(tmp_path, MATH)
    res = runner.invoke(app, ["simulate", str(path), "--to", "0.1,0.2", "--duration", "0.2", "--settle", "0",
                              "--samples", "5", "--plot", str(tmp_path / "s.png")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")
    cal = rd.identification.calibrate_gravity(rd.load(path), [[0.0, 0.0], [0.5, 0.3], [1.0, -0.4], [1.5, 0.9]],
                               rd.gravity_torques(rd.load("planar2r"),
                                                  [[0.0, 0.0], [0.5, 0.3], [1.0, -0.4], [1.5, 0.9]]))
    cal.plot(tmp_path / "c.png", [[0.0, 0.0], [0.5, 0.3]], [[0.0, 0.0], [0.1, 0.1]])
    assert (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG")


# ---- 10. the compile cache ---------------------------------------------------------------------------------------

@needs_cc
@posix
@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770, 0o720])
def test_cache_folder_writable_by_others_is_refused(tmp_path, monkeypatch, mode):
    from robodyn.symbolic import CompileError

    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(mode)
    monkeypatch.setenv("ROBODYN_CACHE", str(cache))
    with pytest.raises(CompileError, match=r"ROBODYN_CACHE=.*cache.* is writable by (its group|others) "
                                           r"\(mode \d+\): robodyn loads compiled code only from a cache"):
        rd.compile(rd.load("planar2r"), "gravity")
    assert os.listdir(cache) == []  # nothing compiled, nothing loaded


@needs_cc
@root
def test_cache_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    from robodyn.symbolic import CompileError

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o755)
    os.chown(cache, 4242, 4242)
    monkeypatch.setenv("ROBODYN_CACHE", str(cache))
    with pytest.raises(CompileError, match=r"is owned by user id 4242, not by you \(0\)"):
        rd.compile(rd.load("planar2r"), "gravity")


@needs_cc
@posix
def test_new_cache_folder_is_private(tmp_path, monkeypatch):
    cache = tmp_path / "a" / "cache"
    monkeypatch.setenv("ROBODYN_CACHE", str(cache))
    rd.compile(rd.load("planar2r"), "gravity")
    assert cache.stat().st_mode & 0o777 == 0o700
    for p in cache.glob("rd_*"):
        if p.suffix in (".so", ".sha256"):
            assert p.stat().st_mode & 0o022 == 0


@needs_cc
@posix
@pytest.mark.parametrize("attack", ["group-writable library", "others-writable sidecar", "linked library",
                                    "foreign owner"])
def test_cached_file_others_could_write_is_refused(tmp_path, monkeypatch, attack):
    from robodyn.symbolic import CompileError

    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    robot = rd.load("planar2r")
    rd.compile(robot, "gravity")
    (lib,) = tmp_path.glob("rd_*.so")
    if attack == "group-writable library":
        lib.chmod(0o775)
    elif attack == "others-writable sidecar":
        lib.with_suffix(".sha256").chmod(0o646)
    elif attack == "linked library":
        real = tmp_path / "elsewhere.so"
        os.replace(lib, real)
        lib.symlink_to(real)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root (chown)")
        os.chown(lib, 4242, 4242)
    with pytest.raises(CompileError, match=r"cached file .*rd_.* (is writable by|is not a regular file|is owned by)"):
        rd.compile(robot, "gravity")
    # raised as it is: no build without the preferred flags around it, no flag blamed for it
    assert not list(tmp_path.glob("refused_*")) and len(list(tmp_path.glob("rd_*.so"))) == 1


@needs_cc
def test_failed_import_is_a_compile_error(tmp_path, monkeypatch):
    """A library whose CPython entry cannot be imported: CompileError, not a raw ImportError."""
    import sysconfig

    from robodyn.symbolic import CompileError
    from robodyn.native.build import compile_library

    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        pytest.skip("no Python headers: no CPython entry is loaded")
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    source = "/* no PyInit_rdmodel here after all */\ndouble rd_twice(double x) { return 2 * x; }\n"
    with pytest.raises(CompileError, match="cannot load the compiled model"):
        compile_library(source, "double rd_twice(double);")
