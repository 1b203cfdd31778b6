"""Atomic output files (robodyn._files.write_atomically): all or nothing, errors that name the file."""

import os

import pytest

import robodyn as rd
from robodyn._files import write_atomically


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
