"""Every CLI command: one-line errors with exit 2, user text printed as it is, strict JSON, 80 columns."""

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.cli._common import console, user_errors
from robodyn.robots import __file__ as _robots_init

runner = CliRunner()
PLANAR2R = (Path(_robots_init).parent / "planar2r.yaml").read_text()


def _strict(name):
    raise ValueError(f"not strict JSON: {name}")


def strict_json(text):
    return json.loads(text, parse_constant=_strict)


def fails_in_one_line(res, *fragments):
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    assert "Traceback" not in res.output


def test_markup_in_user_text_is_printed_as_it_is(tmp_path):
    fails_in_one_line(runner.invoke(app, ["info", "[/x]"]), "[/x]: no such model file")  # a path: it has a "/"
    fails_in_one_line(runner.invoke(app, ["info", "[x]"]), "unknown robot '[x]'")
    path = tmp_path / "r.yaml"
    path.write_text(PLANAR2R.replace("{name: j1,", '{name: "[/]",', 1).replace("name: planar2r", 'name: "[bold]x[/]"'))
    res = runner.invoke(app, ["info", str(path)])
    assert res.exit_code == 0 and "[/]" in res.output and "[bold]x[/]" in res.output, res.output
    for command in (["id", str(path), "--q", "0.1,0.2"], ["model", str(path)], ["fd", str(path)]):
        res = runner.invoke(app, command)
        assert res.exit_code == 0 and "[/]" in res.output, res.output
    res = runner.invoke(app, ["info", "pr"])
    assert res.exit_code == 0 and "[[m11, m12(q2)]" in res.output.replace("\n", " ")


def test_brackets_in_error_messages_survive_in_the_cli(capsys):
    import typer

    with pytest.raises(typer.Exit) as exc, user_errors():
        raise rd.InputError("com must be [x, y, z] in metres\nsecond line")
    assert exc.value.exit_code == 2
    assert capsys.readouterr().err == "error: com must be [x, y, z] in metres second line\n"


def test_input_errors_are_one_line(tmp_path):
    binary = tmp_path / "states.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    fails_in_one_line(runner.invoke(app, ["id", "planar2r", "--states", str(binary)]), "not a text file")
    import gzip

    packed = tmp_path / "run.csv.gz"  # the measured logs in tests/data/measured are shipped so
    packed.write_bytes(gzip.compress(b"t,q1,q2,tau1,tau2\n0,0,0,0,0\n"))
    fails_in_one_line(runner.invoke(app, ["identify", "planar2r", str(packed)]), "gzip -dc")
    nul = tmp_path / "nul.csv"
    nul.write_text("q1,q2\x00\n")
    fails_in_one_line(runner.invoke(app, ["id", "planar2r", "--states", str(nul)]), "NUL")
    fails_in_one_line(runner.invoke(app, ["properties", "planar2r", "--seed", "-1"]), "--seed")
    fails_in_one_line(runner.invoke(app, ["base-params", "planar2r", "--method", "numeric", "--seed", "-1"]), "--seed")
    fails_in_one_line(runner.invoke(app, ["info"]), "Missing argument")
    fails_in_one_line(runner.invoke(app, ["info", "rx90", "--json", "true"]), "unexpected extra argument")
    fails_in_one_line(runner.invoke(app, ["nosuchcommand"]), "No such command")
    fails_in_one_line(runner.invoke(app, ["id", "planar2r", "--q", "a,b"]), "--q")


def test_out_paths_that_cannot_be_written(tmp_path):
    states = tmp_path / "s.csv"
    states.write_text("q1,q2,qd1,qd2,qdd1,qdd2\n0,0,0,0,0,0\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    fails_in_one_line(runner.invoke(app, ["id", "planar2r", "--states", str(states), "--out", str(folder)]),
                      "is a folder")
    fails_in_one_line(runner.invoke(app, ["id", "planar2r", "--states", str(states), "--out", str(tmp_path / "no" / "t.csv")]),
                      "does not exist")
    if Path("/proc/self").is_dir():
        fails_in_one_line(runner.invoke(app, ["id", "planar2r", "--states", str(states), "--out", "/proc/t.csv"]),
                          "/proc")
        fails_in_one_line(runner.invoke(app, ["generate", "planar2r", "--models", "gra", "--out", "/proc/m"]), "/proc")
    # generate and id agree: a missing parent folder is an error, not created
    fails_in_one_line(runner.invoke(app, ["generate", "planar2r", "--models", "gra", "--out", str(tmp_path / "no" / "m")]),
                      "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "s.csv"]


def test_generate_never_replaces_a_file_or_a_link(tmp_path):
    user_file = tmp_path / "notes.txt"
    user_file.write_text("mine")
    fails_in_one_line(runner.invoke(app, ["generate", "planar2r", "--models", "gra", "--out", str(user_file), "--force"]),
                      "not a folder")
    assert user_file.read_text() == "mine"
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    fails_in_one_line(runner.invoke(app, ["generate", "planar2r", "--models", "gra", "--out", str(link), "--force"]),
                      "symbolic link")
    assert link.is_symlink() and list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "notes.txt", "target"]


def test_json_is_strict_and_nan_is_an_error():
    res = runner.invoke(app, ["info", "pr", "--json"])
    doc = strict_json(res.output)
    assert doc["geometry"][1]["qmin"] is None and doc["geometry"][0]["qmin"] == -1.0
    res = runner.invoke(app, ["id", "planar2r", "--qd", "1e200,1e200", "--json"])
    if res.exit_code == 0:  # a finite result (the library may also refuse the overflow itself)
        strict_json(res.output)
    else:
        fails_in_one_line(res)


JSON_COMMANDS = [
    ["list", "--json"], ["info", "puma560", "--json"], ["id", "planar2r", "--q", "0.1,0.2", "--json"],
    ["model", "planar2r", "--json"], ["fd", "planar2r", "--json"],
    ["properties", "planar2r", "--samples", "20", "--json"], ["base-params", "planar2r", "--json"],
    ["accuracy", "ascher2", "--steps", "4", "--json"], ["opcount", "--n-max", "2", "--methods", "recursive", "--json"],
    ["simulate", "planar2r", "--to", "0.3,0.2", "--duration", "0.2", "--settle", "0.05", "--samples", "11", "--json"],
    ["demo", "wam-gravity", "--json"],
]


@pytest.mark.parametrize("command", JSON_COMMANDS, ids=lambda c: c[0])
def test_every_json_output_is_strict(command):
    res = runner.invoke(app, command)
    assert res.exit_code == 0, res.output
    strict_json(res.output)


TEXT_COMMANDS = [c[:-1] for c in JSON_COMMANDS] + [
    ["accuracy", "puma560", "--steps", "4"], ["model", "puma560"], ["properties", "puma560", "--samples", "20"],
    ["base-params", "rx90"], ["info", "rx90"], ["--help"], ["generate", "--help"], ["id", "--help"],
]


@pytest.mark.parametrize("command", TEXT_COMMANDS, ids=lambda c: "_".join(c[:2]))
def test_every_command_fits_80_columns(command, monkeypatch):
    monkeypatch.setattr(console, "_width", 80)
    res = runner.invoke(app, command, env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    long = [line for line in res.output.splitlines() if len(line.rstrip()) > 80]
    assert not long, long
    if command[0] != "list":  # (list shortens each robot's source to its first sentence on purpose)
        assert "…" not in res.output  # no cell cut to "recu…": cells wrap
    assert res.output.splitlines()[0].strip() and "\n\n\n" not in res.output  # no stray blank lines


def test_generate_on_a_pipe_prints_one_line(tmp_path):
    res = runner.invoke(app, ["generate", "planar2r", "--models", "gra", "--out", str(tmp_path / "m")])
    assert res.exit_code == 0 and res.output == f"wrote 8 files to {tmp_path / 'm'}\n"


def test_json_flag_in_help_is_a_plain_flag():
    res = runner.invoke(app, ["info", "--help"], env={"COLUMNS": "80"})
    assert "--json  " in res.output and "<bool>" not in res.output and "{robot}" not in res.output.lower()
    assert "Usage: root info [OPTIONS] ROBOT" in res.output or "info [OPTIONS] ROBOT" in res.output


def test_seed_zero_or_more_still_works():
    res = runner.invoke(app, ["base-params", "planar2r", "--method", "numeric", "--seed", "3", "--json"])
    count = rd.base_parameters(rd.load("planar2r"), friction=False).count
    assert res.exit_code == 0 and strict_json(res.output)["count"] == count
    assert np.isfinite(strict_json(res.output)["values"]).all()


def test_terminal_escape_sequences_from_a_model_file_are_shown_escaped(tmp_path):
    path = tmp_path / "r.yaml"
    evil = "evil\x1b[2J\x1b]0;title\x07\u202eX\nY"
    path.write_text(PLANAR2R.replace("name: planar2r", f"name: {json.dumps(evil)}").replace(
        "{name: j1,", f"{{name: {json.dumps(evil)},", 1))
    for command in (["info", str(path)], ["id", str(path)], ["id", str(path), "--json"], ["model", str(path)]):
        res = runner.invoke(app, command)
        assert res.exit_code == 0, res.output
        assert "\x1b" not in res.output and "\x07" not in res.output and "\u202e" not in res.output
        assert "evil" in res.output


def test_print_json_nan_is_an_error_unless_the_field_is_undefined_on_purpose(capsys):
    import typer

    from robodyn.cli._common import print_json

    print_json({"std": [1.0, float("nan")], "x": 2}, undefined=("std",))
    assert strict_json(capsys.readouterr().out) == {"std": [1.0, None], "x": 2}
    with pytest.raises(typer.Exit):
        print_json({"tau": np.array([1.0, np.inf])})
    captured = capsys.readouterr()
    assert captured.out == "" and "tau[1] is inf" in captured.err
