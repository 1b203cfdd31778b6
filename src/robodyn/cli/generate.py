"""``robodyn generate``: write the customized symbolic models of a robot (Khalil & Dombre §9.6)."""

from __future__ import annotations

from types import MappingProxyType
import json
from pathlib import Path

import typer

from robodyn.cli._app import app
from robodyn.cli._common import ROBOT_ARGUMENT, console, user_errors
from robodyn.cli._limits import check_symbolic
from robodyn.progress import progress
from robodyn.files import MANIFEST, write_folder_atomically
from robodyn.errors import InputError
from robodyn.sanitize import child_path, comment, identifier, markdown

#: --models: the kinds of robodyn.symbolic.KINDS (the public functions' names) and their short names (files are
#: named by the short name, planar2r_gra.c); the symbolic package is imported only when a model is made
_MODELS_HELP = ("Comma-separated kinds: inverse_dynamics, inertia_matrix, forward_dynamics, gravity_torques, "
                "bias_torques, regressor, inverse_dynamics_derivatives, forward_dynamics_derivatives, jacobian, "
                "jacobian_dot_qd, or their short names idm, inm, ddm, gra, ccg, dim, didm, dddm, jac, jdq")
#: short names of the kinds beyond robodyn.symbolic.KINDS: the derivatives (robodyn.symbolic.derivative_model) and
#: the kinematics of one frame (robodyn.symbolic.kinematics_model)
EXTRA_SHORT = MappingProxyType({"didm": "inverse_dynamics_derivatives", "dddm": "forward_dynamics_derivatives",
                                "jac": "jacobian", "jdq": "jacobian_dot_qd"})
_LANGS = MappingProxyType({"python": ".py", "c": ".c", "matlab": ".m", "julia": ".jl"})
#: the operation counts of the models, in every folder robodyn generate writes
OPERATIONS = "operations.json"


def _split(text: str, allowed, option: str) -> list[str]:
    items = [t.strip().lower() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise InputError(f"option {option} = {text!r}: choose from {', '.join(allowed)} (comma separated)")
    return items


def all_short_names() -> dict:
    """Short name -> kind of every kind ``robodyn generate`` writes."""
    from robodyn.symbolic.models import SHORT

    return {**SHORT, **EXTRA_SHORT}


def _model(robot, kind: str, params: str, parameters_input: bool, frame):
    """(the customized model of ``kind``, the model its C is written from): a dynamic model, its derivatives or the
    kinematics of ``frame``. With ``parameters_input`` the C model reads the parameters from its argument
    ``params``; a derivative kind's is then the derivative of the model with that argument, as ``rd.compile``'s
    (the same ``params``, also those whose derivative vanishes, such as the Coulomb and offset friction)."""
    from robodyn.symbolic import customized_model
    from robodyn.symbolic.derivative_model import DERIVATIVE_KINDS, derivative_model, parameters_input_model
    from robodyn.symbolic.kinematics_model import KINEMATICS_KINDS, kinematics_model

    if kind in KINEMATICS_KINDS:
        m = kinematics_model(robot, kind, frame=frame)
        return m, m
    if not parameters_input:
        m = (derivative_model if kind in DERIVATIVE_KINDS else customized_model)(robot, kind, parameters=params)
        return m, m
    cm, _, _, m = parameters_input_model(robot, kind, constants=True, parameters=params)
    return m, cm


#: the titles of the listings (``*.txt``) of the kinds beyond robodyn.symbolic.KINDS
_TITLES = MappingProxyType({
    "inverse_dynamics_derivatives": "dGamma/dq and dGamma/dqd (rows 1..n, n+1..2n) of the inverse dynamic model: the "
                                    "forward-mode derivative of the customized Newton-Euler algorithm [9.84]-[9.94]",
    "forward_dynamics_derivatives": "dqdd/dq, dqdd/dqd and dqdd/dGamma (rows 1..n, n+1..2n, 2n+1..3n) of the direct "
                                    "dynamic model: the forward-mode derivative of its customized model",
    "jacobian": "Jacobian J (6 x n, rows [v; w] in R0) of frame {frame}: the derivative with respect to qdd of the "
                "forward recursion [9.84]-[9.87] (g = 0)",
    "jacobian_dot_qd": "Jdot qd (rows [a; wdot] in R0) of frame {frame}: the forward recursion [9.84]-[9.87] at "
                       "qdd = 0, g = 0",
})


def _listing(model, frame) -> str:
    """The model as Khalil & Dombre's listings print it."""
    from robodyn.model.arguments import frame_index
    from robodyn.symbolic.codegen.listing import listing

    if model.kind not in _TITLES:
        return str(model)
    return listing(model, _TITLES[model.kind].format(frame=frame_index(model.robot, frame) + 1))


def check_models(models, parameters_input: bool, frame) -> None:
    """The refusals of option combinations, before anything is generated."""
    from robodyn.symbolic.kinematics_model import KINEMATICS_KINDS

    if parameters_input:
        fixed = [k for k in models if k in KINEMATICS_KINDS or k == "regressor"]
        if fixed:
            raise InputError(f"option --parameters-input is not available for {', '.join(fixed)}: their models hold "
                             "no inertial parameters (the regressor is their coefficient); leave those out or the "
                             "option off")
    if frame is not None and not any(k in KINEMATICS_KINDS for k in models):
        raise InputError("option --frame is for the models jacobian and jacobian_dot_qd (jac, jdq)")


def write_models(robot, models, params, langs, out: Path, force: bool = False, progress=None,
                 parameters_input: bool = False, frame=None) -> list[Path]:
    """Generate and write everything into the folder ``out``, all or nothing
    (:func:`robodyn.files.write_folder_atomically`: rules for existing folders, --force, locks, modes).

    ``models``: kinds (``robodyn.symbolic.KINDS``: inverse_dynamics, gravity_torques, ...; the derivatives
    inverse_dynamics_derivatives and forward_dynamics_derivatives; jacobian and jacobian_dot_qd of ``frame``,
    default the end frame) or their short names (:func:`all_short_names`: idm, gra, didm, jac, ...), each
    written once.

    File names are ``identifier(robot.name)_SHORT.EXT`` (:mod:`robodyn.sanitize`): they stay inside ``out``.
    C comes with a header ``.h``; with ``parameters_input`` the C functions read the nonzero inertial parameters
    and friction coefficients from an extra argument ``params`` (order in the header and the listing)."""
    from robodyn.symbolic.codegen import c_code
    from robodyn.symbolic.models import ALIASES

    short_names = all_short_names()
    file_names = {kind: short for short, kind in short_names.items()}
    kinds = list(dict.fromkeys(ALIASES.get(k, short_names.get(k, k)) for k in models))
    check_models(kinds, parameters_input, frame)

    stem0 = identifier(robot.name)

    def fill(tmp: Path) -> None:
        counts, files = {}, []

        def put(name: str, text: str) -> None:
            child_path(tmp, name).write_text(text, encoding="utf-8")
            files.append(name)

        for kind in kinds:
            short = file_names[kind]
            m, cm = _model(robot, kind, params, parameters_input, frame)
            stem = identifier(f"{stem0}_{short}")  # the file stem is the function name (MATLAB needs both equal)
            put(f"{stem}.txt", _listing(m, frame))
            for lang in langs:
                if lang == "c":
                    put(f"{stem}.c", c_code.source(cm, stem))
                    put(f"{stem}.h", c_code.header(cm, stem))
                    continue
                put(f"{stem}{_LANGS[lang]}", {"python": m.numpy_source, "matlab": m.matlab_source,
                                              "julia": m.julia_source}[lang](stem))
            counts[short] = m.operation_count()
            if progress is not None:
                progress()
        listed = list(files)
        put("base_parameters.txt", _base_parameters_text(robot))
        put("README.md", _readme(robot, params, counts, listed))
        put(OPERATIONS, json.dumps(counts, indent=2) + "\n")

    write_folder_atomically(out, fill, force=force)
    return sorted(Path(out).iterdir())


def _clean(x: float) -> str:
    """A number as people write it: the shortest decimal within 1e-14 (relative) of ``x`` — the rounding
    noise of the few operations that formed it — so -0.3738, not -0.37379999999999997 (repr of the result)."""
    x = float(x)
    for digits in range(1, 18):
        v = float(f"{x:.{digits}g}")
        if abs(v - x) <= 1e-14 * abs(x):
            return repr(v + 0.0)  # + 0.0: no "-0.0"
    return repr(x)


def _base_parameters_text(robot) -> str:
    from robodyn import base_parameters

    bp = base_parameters(robot, method="symbolic", friction=False)
    lines = [f"Base inertial parameters of {comment(robot.name)} (Khalil & Dombre section 9.4): {len(bp.names)}", ""]
    for name, expr, value in zip(bp.names, bp.expressions, bp.values):
        expr = str(expr)
        lines.append(f"{name} = {_clean(value)}" if expr == str(name) else f"{name} = {expr} = {_clean(value)}")
    return "\n".join(lines) + "\n"


def _readme(robot, params, counts, files) -> str:
    short_names = all_short_names()
    rows = "\n".join(f"| {s} | {short_names[s]} | {c['mul']} | {c['add']} | {c['sincos']} |" for s, c in counts.items())
    name, source = markdown(robot.name), markdown(robot.source or "n/a", limit=400)
    return f"""# Customized symbolic models of {name}

Generated by `robodyn generate` (Khalil & Dombre section 9.6, customized Newton-Euler; {params} inertial
parameters).  Robot: {name}, joints {''.join('RP-'[s] for s in robot.sigma)}, source: {source}.

| model | meaning | mult | add | sin/cos |
|---|---|---|---|---|
{rows}

Files: {', '.join(files)}, {OPERATIONS}, base_parameters.txt, and {MANIFEST}: the SHA-256
of each file (`sha256sum -c {MANIFEST}`); `robodyn generate --force` replaces this folder only while it holds
exactly these files, unchanged.

* `*.txt`: the model as Khalil & Dombre's listings print it (one intermediate variable a line).
* `*.py`: NumPy functions evaluating whole batches, arguments (..., n); `*.c`: `void NAME(const double *q, ...,
  double *out)` plus `long NAME_batch(long count, const double *q, long q_stride, ..., double *out)`;
  `*.h`: the C prototypes; `*.m` / `*.jl`: MATLAB / Julia functions for one sample.
* Units: SI (rad, m, kg, N, N m); gravity as in the robot file; torques include rotor inertia and friction.
"""


@app.command("generate")
def generate_command(
    robot: str = ROBOT_ARGUMENT,
    models: str = typer.Option("idm,inm,ddm", "--models", help=_MODELS_HELP + "."),
    params: str = typer.Option("standard", "--params", help="Inertial parameters: standard or base."),
    lang: str = typer.Option("python,c", "--lang", help="Comma-separated: " + ",".join(_LANGS)),
    out: Path = typer.Option(None, "--out", help="Output folder (default ./NAME_models, NAME the robot's name as an identifier); its parent must exist; written atomically."),
    parameters_input: bool = typer.Option(
        False, "--parameters-input",
        help="C functions take the inertial parameters and friction coefficients as an argument params "
        "(order in the .h file), so one compiled function serves identified parameters (the dynamic models and "
        "their derivatives; not jac, jdq or dim)."),
    frame: str = typer.Option(None, "--frame", help="Frame of the models jacobian and jacobian_dot_qd (jac, jdq): its number 1..nf or name; default the end frame."),
    force: bool = typer.Option(False, "--force", help="Replace an existing output folder that robodyn wrote, only while it holds exactly the files of its manifest (MANIFEST.sha256), unchanged; never a file, a link or a folder with other or changed files."),
) -> None:
    """Write the customized symbolic models of ROBOT, their operation counts, base parameters and a README."""
    with user_errors():
        from robodyn.model.io import load

        from robodyn.model.arguments import frame_index
        from robodyn.symbolic.models import ALIASES, KINDS

        r = load(robot)
        extra = (*EXTRA_SHORT.values(), *EXTRA_SHORT)
        wanted = _split(models, (*KINDS, *ALIASES, *extra), "--models")
        langs = _split(lang, _LANGS, "--lang")
        if params not in ("standard", "base"):
            raise InputError(f"option --params = {params!r}: choose standard or base")
        if frame is not None:
            frame = int(frame) if frame.strip().isdigit() else frame
            frame_index(r, frame)   # an unknown frame: the error before anything is generated
        check_models([ALIASES.get(k, all_short_names().get(k, k)) for k in wanted], parameters_input, frame)
        check_symbolic(r, "generate")  # before generating anything: a robot too large for symbolic models
        folder = out if out is not None else Path(f"{identifier(r.name)}_models")
        with progress(f"generating {identifier(r.name)}", total=len(wanted)) as bar:
            files = write_models(r, wanted, params, langs, folder, force, progress=bar.advance,
                                 parameters_input=parameters_input, frame=frame)
        console.print(f"wrote {len(files)} files to {folder}", soft_wrap=True)
