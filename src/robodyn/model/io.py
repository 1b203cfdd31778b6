"""Robot model files (YAML) and the built-in robot library.

Schema (the contract users write; missing keys default to 0, antecedent to j − 1)::

    name: rx90
    source: "where the numbers come from"
    gravity: [0, 0, -9.81]
    joints:   # one row per frame j = 1..nf
      - {name: j1, antecedent: 0, sigma: 0, gamma: 0, b: 0, alpha: 0, d: 0, theta: 0, r: 0, qmin: -3, qmax: 3}
    links:    # one row per frame; standard parameters in R_j about O_j (SI units)
      - {XX: 0, XY: 0, XZ: 0, YY: 0, YZ: 0, ZZ: 1.2, MX: 0, MY: 0, MZ: 0, M: 10, Ia: 0, Fc: 0, Fv: 0}
      # or: {mass: m, com: [x, y, z], inertia_com: [[..],[..],[..]], Ia: .., Fc: .., Fv: ..}

Angles are in radians; a number may be written as an expression of ``pi`` (``pi/2``, ``-pi/2``).
"""

from __future__ import annotations

import ast
import math
import os
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

from robodyn._files import write_atomically
from robodyn.errors import ModelError, ModelFileError, UnknownRobotError
from robodyn.model.inertia import standard_from_com
from robodyn.model.robot import PARAMETER_NAMES, Robot

_JOINT_KEYS = ("name", "antecedent", "sigma", "gamma", "b", "alpha", "d", "theta", "r", "qmin", "qmax")
_LINK_EXTRA = ("Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")
_COM_KEYS = ("mass", "com", "inertia_com")
_TOP_KEYS = ("name", "source", "gravity", "joints", "links")


def list_robots() -> list[str]:
    """Names of the built-in robots, sorted."""
    files = resources.files("robodyn.robots").iterdir()
    return sorted(Path(f.name).stem for f in files if f.name.endswith(".yaml"))


def load(name_or_path: str | os.PathLike, strict: bool = True) -> Robot:
    """Load a built-in robot by name (see :func:`list_robots`), a model file ``*.yaml`` or a ``*.urdf`` file.

    ``strict=False`` accepts published inertias that violate the triangle inequality, with a warning.
    A URDF file is read by :func:`robodyn.from_urdf` (whole tree, default options).

    Raises
    ------
    UnknownRobotError
        A name that is neither a built-in robot nor an existing file.
    ModelFileError
        A malformed file; the message names the file, the row and the field.
    """
    text = str(name_or_path)
    path = Path(text)
    if path.suffix.lower() == ".urdf":
        from robodyn.model.urdf import from_urdf

        return from_urdf(path, strict=strict)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ModelFileError(f"{path}: no such model file")
        return _from_text(path.read_text(encoding="utf-8"), str(path), strict)
    builtin = resources.files("robodyn.robots").joinpath(f"{text}.yaml")
    if not builtin.is_file():
        raise UnknownRobotError(
            f"unknown robot '{text}'; built-in robots are {', '.join(list_robots())}, or give a path to a .yaml file"
        )
    return _from_text(builtin.read_text(encoding="utf-8"), f"built-in robot '{text}'", strict)


def loads(text: str, origin: str = "<string>") -> Robot:
    """Parse a model from YAML text (``origin`` names it in error messages)."""
    return _from_text(text, origin)


def _from_text(text: str, origin: str, strict: bool = True) -> Robot:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ModelFileError(f"{origin}: not valid YAML ({exc})") from None
    if not isinstance(doc, dict):
        raise ModelFileError(f"{origin}: expected a mapping with keys {', '.join(_TOP_KEYS)}")
    unknown = set(doc) - set(_TOP_KEYS)
    if unknown:
        raise ModelFileError(f"{origin}: unknown top-level key(s) {sorted(unknown)}; allowed: {', '.join(_TOP_KEYS)}")
    for key in ("joints", "links"):
        if not isinstance(doc.get(key), list) or not doc[key]:
            raise ModelFileError(f"{origin}: '{key}' must be a non-empty list, one row per frame")
    joints, links = doc["joints"], doc["links"]
    if len(joints) != len(links):
        raise ModelFileError(f"{origin}: {len(joints)} rows in 'joints' but {len(links)} in 'links'; give one of each per frame")
    nf = len(joints)
    geo = {k: np.zeros(nf) for k in ("gamma", "b", "alpha", "d", "theta", "r")}
    ant, sigma, names, qlim = np.arange(nf), np.zeros(nf, int), [], []
    for j, row in enumerate(joints, start=1):
        where = f"{origin}, joints row {j}"
        _check_row(row, _JOINT_KEYS, where)
        names.append(str(row.get("name", f"j{j}")))
        ant[j - 1] = _integer(row.get("antecedent", j - 1), where, "antecedent")
        sigma[j - 1] = _integer(row.get("sigma", 0), where, "sigma")
        for k in geo:
            geo[k][j - 1] = _number(row.get(k, 0), where, k)
        if sigma[j - 1] != 2:
            qlim.append([_number(row.get("qmin", -math.inf), where, "qmin"), _number(row.get("qmax", math.inf), where, "qmax")])
        elif "qmin" in row or "qmax" in row:
            raise ModelFileError(f"{where}: field qmin/qmax on a fixed frame (sigma: 2); remove it")
    params = np.zeros((nf, 10))
    extra = {k: np.zeros(nf) for k in _LINK_EXTRA}
    for j, row in enumerate(links, start=1):
        where = f"{origin}, links row {j}"
        _check_row(row, PARAMETER_NAMES + _LINK_EXTRA + _COM_KEYS, where)
        if any(k in row for k in _COM_KEYS):
            if any(k in row for k in PARAMETER_NAMES):
                raise ModelFileError(f"{where}: give either standard parameters (XX..M) or mass/com/inertia_com, not both")
            params[j - 1] = _from_com(row, where)
        else:
            params[j - 1] = [_number(row.get(k, 0), where, k) for k in PARAMETER_NAMES]
        for k in _LINK_EXTRA:
            extra[k][j - 1] = _number(row.get(k, 0), where, k)
    gravity = doc.get("gravity", [0, 0, -9.81])
    if not isinstance(gravity, list) or len(gravity) != 3:
        raise ModelFileError(f"{origin}: field gravity must be a list of 3 numbers (m/s^2, base frame)")
    try:
        return Robot(
            name=str(doc.get("name", Path(origin).stem)),
            source=str(doc.get("source", "")),
            antecedent=ant,
            sigma=sigma,
            params=params,
            gravity=[_number(g, origin, "gravity") for g in gravity],
            joint_names=tuple(names),
            qlim=np.array(qlim).reshape(-1, 2),
            strict=strict,
            **geo,
            **extra,
        )
    except ModelError as exc:
        raise ModelFileError(f"{origin}: {exc}") from None


def _check_row(row, allowed, where):
    if not isinstance(row, dict):
        raise ModelFileError(f"{where}: expected a mapping like {{{allowed[0]}: ...}}, got {row!r}")
    unknown = [k for k in row if k not in allowed]
    if unknown:
        raise ModelFileError(f"{where}: unknown field '{unknown[0]}'; allowed fields: {', '.join(allowed)}")


def _from_com(row, where):
    missing = [k for k in _COM_KEYS if k not in row]
    if missing:
        raise ModelFileError(f"{where}: field '{missing[0]}' missing; mass, com and inertia_com go together")
    mass = _number(row["mass"], where, "mass")
    com = row["com"]
    if not isinstance(com, list) or len(com) != 3:
        raise ModelFileError(f"{where}: field com must be [x, y, z] in metres, in frame R_j")
    I = row["inertia_com"]
    flat = [x for r in I for x in (r if isinstance(r, list) else [r])] if isinstance(I, list) else None
    if flat is None or len(flat) not in (6, 9) or (len(flat) == 9 and not all(isinstance(r, list) and len(r) == 3 for r in I)):
        raise ModelFileError(f"{where}: field inertia_com must be a 3x3 matrix or [XX, XY, XZ, YY, YZ, ZZ] about the centre of mass")
    vals = np.array([_number(x, where, "inertia_com") for x in flat])
    if len(vals) == 9:
        vals = vals.reshape(3, 3)
        if not np.allclose(vals, vals.T, rtol=0, atol=1e-12 * max(1.0, np.abs(vals).max())):
            raise ModelFileError(f"{where}: field inertia_com is not symmetric")
    return standard_from_com(mass, [_number(c, where, "com") for c in com], vals)


_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd, ast.Load)


def _number(value, where, field) -> float:
    if isinstance(value, bool):
        raise ModelFileError(f"{where}: field {field} = {value!r} is not a number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            tree = ast.parse(value.strip(), mode="eval")
            if all(isinstance(n, _ALLOWED_NODES) for n in ast.walk(tree)) and all(n.id == "pi" for n in ast.walk(tree) if isinstance(n, ast.Name)):
                return float(eval(compile(tree, "<model>", "eval"), {"__builtins__": {}}, {"pi": math.pi}))
        except (SyntaxError, TypeError, ZeroDivisionError):
            pass
    raise ModelFileError(f"{where}: field {field} = {value!r} is not a number (an expression of pi such as pi/2 is allowed)")


def _integer(value, where, field) -> int:
    x = _number(value, where, field)
    if x != int(x):
        raise ModelFileError(f"{where}: field {field} = {value!r} must be an integer")
    return int(x)


def dumps(robot: Robot) -> str:
    """The YAML text of a robot in the standard-parameter form of the schema."""
    joints, links = [], []
    k = 0
    for i in range(robot.nf):
        row = {"name": robot.joint_names[i], "antecedent": int(robot.antecedent[i]), "sigma": int(robot.sigma[i])}
        row.update({g: float(getattr(robot, g)[i]) for g in ("gamma", "b", "alpha", "d", "theta", "r")})
        if robot.sigma[i] != 2:
            lo, hi = robot.qlim[k]
            k += 1
            if np.isfinite(lo):
                row["qmin"] = float(lo)
            if np.isfinite(hi):
                row["qmax"] = float(hi)
        joints.append(row)
        link = {p: float(v) for p, v in zip(PARAMETER_NAMES, robot.params[i])}
        link.update({e: float(getattr(robot, e)[i]) for e in _LINK_EXTRA if getattr(robot, e)[i] != 0})
        links.append(link)
    doc = {"name": robot.name, "source": robot.source, "gravity": [float(g) for g in robot.gravity], "joints": joints, "links": links}
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=200)


def save(robot: Robot, path: str | os.PathLike) -> Path:
    """Write ``robot`` to a YAML model file (or URDF for ``*.urdf``) atomically; returns the path."""
    if Path(path).suffix.lower() == ".urdf":
        from robodyn.model.urdf import to_urdf

        text = to_urdf(robot)
    else:
        text = dumps(robot)
    return write_atomically(path, lambda fh: fh.write(text), what="model file")
