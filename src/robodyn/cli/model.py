"""Commands on the complete dynamic model: model (A, C, Q, H at a state), fd (direct dynamics), properties."""

from __future__ import annotations

import numpy as np
import typer
from rich.console import Group
from rich.text import Text

from robodyn.cli._app import app
from robodyn.progress import progress

from robodyn.cli._common import (JSON_OPTION, ROBOT_ARGUMENT, chop, compact_table, console, get_robot, joint_vector,
                                matrix_table, names_legend, parse_vector, print_json, print_table, user_errors)
from robodyn.cli._limits import check_work, count, seed as check_seed


def _matrix_table(title: str, M: np.ndarray, names) -> Group:
    """:func:`matrix_table` with rows numbered 1..n, under ``title``."""
    table = matrix_table(M, [str(k) for k in range(1, len(names) + 1)])
    return Group(Text(title), table)  # the title on its own line: a narrow table would wrap it


def _vector_table(title: str, columns: dict[str, np.ndarray], names, digits: int = 6) -> Group:
    table = compact_table("joint", *columns)
    shown = [chop(v) for v in columns.values()]
    for k, name in enumerate(names):
        table.add_row(name, *(f"{v[k]:.{digits}g}" for v in shown))
    return Group(Text(title), table)


def _array(v) -> str:
    return "[" + ", ".join(f"{x:.6g}" for x in chop(v)) + "]"


@app.command("model")
def model_command(
    robot: str = ROBOT_ARGUMENT,
    q: str = typer.Option(None, "--q", help="Joint positions, n numbers (rad | m), default zeros."),
    qd: str = typer.Option(None, "--qd", help="Joint velocities, n numbers (rad/s | m/s), default zeros."),
    json_out: bool = JSON_OPTION,
    degrees: bool = typer.Option(False, "--degrees", help="Revolute joints of --q, --qd in deg and deg/s."),
) -> None:
    """Print the Lagrange form Γ = A q̈ + C q̇ + Q + Γ_f at a state: A(q), C(q, q̇), Q(q), H = C q̇ + Q + Γ_f.

    A floating or mobile base robot takes --q with n + 7 numbers [base position, quaternion x y z w, joints] and
    --qd with n + 6 [base linear, base angular in R_0, joints]; it prints M(q) (n + 6)², G and H (no C).
    """
    from robodyn.dynamics.api import inertia_matrix
    from robodyn.dynamics.lagrange import coriolis_matrix
    from robodyn.dynamics.newton_euler import bias_torques, gravity_torques

    with user_errors():
        r = get_robot(robot)
        n = r.n
        # C(q, q̇) goes through the Christoffel symbols, n^3 of them (and their partial derivatives)
        check_work(f"model of robot '{r.name}' (n = {n})", nbytes=40.0 * n**3, flops=100.0 * n**3)
        if r.base != "fixed":
            _floating_model(r, q, qd, json_out)
            return
        qv, qdv = joint_vector(r, q, "--q", degrees, position=True), joint_vector(r, qd, "--qd", degrees)
        A, C = inertia_matrix(r, qv), coriolis_matrix(r, qv, qdv)
        Q, H = gravity_torques(r, qv), bias_torques(r, qv, qdv)
    if json_out:
        print_json({"robot": r.name, "q": qv, "qd": qdv, "A": A, "C": C, "Cqd": C @ qdv, "Q": Q, "H": H})
        return
    names = r.q_names
    console.print(Text.assemble((r.name, "bold"), f"  q = {_array(qv)}  qd = {_array(qdv)}"))
    console.print(names_legend(names), highlight=False)
    console.print(_matrix_table("inertia matrix A(q)", A, names))
    console.print(_matrix_table("Coriolis/centrifugal matrix C(q, qd) [9.7]", C, names))
    console.print(_vector_table("torques", {"C qd": C @ qdv, "Q (gravity)": Q, "H (bias, friction incl.)": H}, names))


def _floating_model(r, q, qd, json_out: bool) -> None:
    """`robodyn model` of a floating or mobile base robot: M(q) (n + 6)², gravity and bias generalized forces."""
    from robodyn.cli.core import BASE_VELOCITY_NAMES, free_flyer_vector
    from robodyn.dynamics.floating import floating_inertia_matrix, floating_inverse_dynamics

    qv, v = free_flyer_vector(r, q, "--q"), free_flyer_vector(r, qd, "--qd")
    zero = np.zeros(r.n + 6)
    M = floating_inertia_matrix(r, qv)
    G = floating_inverse_dynamics(r, qv, zero, zero)
    H = floating_inverse_dynamics(r, qv, v, zero)
    if json_out:
        print_json({"robot": r.name, "base": r.base, "q": qv, "v": v, "M": M, "G": G, "H": H})
        return
    names = BASE_VELOCITY_NAMES + r.q_names
    console.print(Text.assemble((r.name, "bold"), f"  {r.base} base  q = {_array(qv)}  v = {_array(v)}"))
    console.print(names_legend(names), highlight=False)
    console.print(_matrix_table("free-flyer inertia matrix M(q) (base rows: R_0, about O_0)", M, names))
    console.print(_vector_table("generalized forces", {"G (gravity)": G, "H (bias, friction incl.)": H}, names))


@app.command("fd")
def fd_command(
    robot: str = ROBOT_ARGUMENT,
    q: str = typer.Option(None, "--q", help="Joint positions, n numbers, default zeros."),
    qd: str = typer.Option(None, "--qd", help="Joint velocities, n numbers, default zeros."),
    tau: str = typer.Option(None, "--tau", help="Joint torques/forces, n numbers (N m | N), default zeros."),
    method: str = typer.Option(
        "recursive", "--method",
        help="recursive (O(n), §9.7.2), cholesky ([9.95]–[9.96]), gibbs_appell (Mata et al.) or spatial_operator "
        "(Kozłowski).",
    ),
    json_out: bool = JSON_OPTION,
    degrees: bool = typer.Option(False, "--degrees", help="Revolute joints of --q, --qd in deg and deg/s."),
) -> None:
    """Direct dynamics: print the joint accelerations q̈ = A⁻¹(Γ − H) [9.96].

    A floating base robot takes --q with n + 7 numbers [base position, quaternion x y z w, joints], --qd and --tau
    with n + 6 (base wrench in R_0, then joint torques) and prints a = [v̇_0, ω̇_0, q̈].
    """
    from robodyn.dynamics.api import forward_dynamics

    with user_errors():
        r = get_robot(robot)
        if method != "recursive":
            # the other formulations form and factor the n x n inertia matrix, O(n^2) NumPy operations of
            # O(n) each per call
            check_work(f"fd --method {method} of robot '{r.name}' (n = {r.n})", nbytes=48.0 * r.n**2,
                       flops=1e4 * r.n**3, hint="use --method recursive (O(n))")
        if r.base != "fixed":
            _floating_fd(r, q, qd, tau, method, json_out)
            return
        qv, qdv = joint_vector(r, q, "--q", degrees, position=True), joint_vector(r, qd, "--qd", degrees)
        tv = parse_vector(tau, r.n, "--tau")
        qdd = forward_dynamics(r, qv, qdv, tv, method=method)
    if json_out:
        print_json({"robot": r.name, "method": method, "q": qv, "qd": qdv, "tau": tv, "qdd": qdd})
        return
    console.print(Text.assemble((r.name, "bold"), f"  direct dynamics, method {method}"))
    console.print(_vector_table("accelerations", {"tau": tv, "qdd": qdd}, r.q_names))


@app.command("properties")
def properties_command(
    robot: str = ROBOT_ARGUMENT,
    samples: int = typer.Option(2000, "--samples", help="Joint-space samples for the bound estimates (1 or more)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Random seed, 0 or more (results are reproducible)."),
    prismatic_range: str = typer.Option(None, "--prismatic-range", help="lo,hi (m) for prismatic joints without limits."),
    json_out: bool = JSON_OPTION,
    degrees: bool = typer.Option(False, "--degrees", help="Revolute joints of --q, --qd in deg and deg/s."),
) -> None:
    """Inertial couplings of A and Q, property checks, and sampled bounds ‖A‖ ≤ α, ‖C‖ ≤ β‖q̇‖, ‖Q‖ ≤ γ.

    Prismatic joints without limits (and no --prismatic-range): couplings and checks sample them on
    (−1, 1) m, and the bounds are skipped (they grow with |q|), both said in the output.
    """
    from robodyn.analysis import (
        check_inertia_matrix,
        check_passivity,
        check_skew_symmetry,
        dynamic_bounds,
        inertial_couplings,
    )
    from robodyn.analysis.coupling import joint_ranges, unlimited_prismatic_joints

    with user_errors():
        r = get_robot(robot)
        count(samples, "--samples")
        check_seed(seed)
        n = r.n
        # inertial_couplings: A(q) at 16 (n + 1) states; dynamic_bounds: the Christoffel symbols (and partials)
        # of 256 states at a time, n^3 each
        check_work(f"properties of robot '{r.name}' (n = {n}, {samples} samples)",
                   nbytes=8.0 * n**3 * (16 * 3 + 4 * min(samples, 256)), flops=100.0 * n**3 * (samples + 16 * n + 128),
                   hint="give fewer --samples")
        pr = None if prismatic_range is None else tuple(parse_vector(prismatic_range, 2, "--prismatic-range"))
        cs = inertial_couplings(r, seed=seed, prismatic_range=pr)
        lo, hi = joint_ranges(r, pr).T
        rng = np.random.default_rng(seed)
        qs, qds = rng.uniform(lo, hi, (64, r.n)), rng.uniform(-2, 2, (64, r.n))
        inertia_check = check_inertia_matrix(r, qs)
        checks = {
            "A symmetric": inertia_check.symmetric,
            "A positive definite": inertia_check.positive_definite,
            "Adot - 2C skew-symmetric": check_skew_symmetry(r, qs, qds).skew_symmetric,
            "qd^T (Adot - 2C) qd = 0": check_passivity(r, qs, qds).lossless,
        }
        free = [] if pr is not None else unlimited_prismatic_joints(r)
        notes, bounds = [], None
        if free:
            joints = ", ".join(f"q{k}" for k in free)
            notes.append(f"prismatic joint(s) {joints} without limits: couplings and property checks sampled on "
                         "(-1, 1) m")
            notes.append(f"bounds skipped: prismatic joint(s) {joints} have no finite limits, so ‖A‖, ‖C‖, ‖Q‖ grow "
                         "with |q|; give qmin/qmax in the robot file or --prismatic-range lo,hi")
        else:
            with progress("sampling joint space", total=samples) as bar:
                bounds = dynamic_bounds(r, samples=samples, seed=seed, prismatic_range=pr,
                                        progress=lambda done, total: bar.update(completed=done, total=total))
    n = r.n
    inertia = [[cs.inertia_entry(i, j) for j in range(1, n + 1)] for i in range(1, n + 1)]
    gravity = [cs.gravity_entry(i) for i in range(1, n + 1)]
    keys = ("alpha_min", "alpha", "lambda_min", "beta", "beta_upper", "gamma")
    b = None if bounds is None else {k: getattr(bounds, k) for k in keys}
    if json_out:
        print_json({"robot": r.name, "inertia": inertia, "gravity": gravity, "checks": checks, "bounds": b,
                    "samples": None if bounds is None else bounds.samples, "seed": seed,
                    "ranges": joint_ranges(r, pr) if bounds is None else bounds.ranges, "notes": notes})
        return
    console.print(Text.assemble((f"inertial couplings of {r.name}", "bold"), ": A(q) = [m_ij], m_ij(q_k) depends on q_k"))
    print_table(*[f"col {j}" for j in range(1, n + 1)], show_header=False, rows=inertia)
    console.print("gravity: " + ", ".join(gravity))
    print_table("property (64 random states)", "holds", title_justify="left",
                rows=[(name, "yes" if ok else Text("NO", style="red")) for name, ok in checks.items()])
    for note in notes:
        console.print(note, highlight=False, soft_wrap=True)
    if bounds is None:
        return
    console.print(Text.assemble(("bounds on dynamic terms", "bold"), f" ({bounds.samples} samples, seed {seed}, 2-norms)"))
    labels = {"alpha_min": "k0 = min ‖A‖", "alpha": "α = max ‖A‖", "lambda_min": "min λ(A)",
              "beta": "β: ‖C‖ ≤ β‖qd‖ (sampled)", "beta_upper": "β upper (Cauchy–Schwarz)", "gamma": "γ = max ‖Q‖"}
    print_table("bound", "estimate", rows=[(label, f"{b[key]:.6g}") for key, label in labels.items()])


def _floating_fd(r, q, qd, tau, method: str, json_out: bool) -> None:
    """`robodyn fd` of a floating base robot: a = [v̇_0, ω̇_0, q̈] by the articulated-body algorithm."""
    from robodyn.cli.core import BASE_VELOCITY_NAMES, free_flyer_vector
    from robodyn.dynamics.floating import floating_forward_dynamics
    from robodyn.errors import InputError

    if r.base != "floating":
        raise InputError(f"robot '{r.name}' has a {r.base} base, whose motion is given: its forward dynamics needs "
                         "the base acceleration (robodyn.floating.floating_forward_dynamics(..., base_acceleration=...))")
    if method != "recursive":
        raise InputError(f"--method {method}: a floating base robot's forward dynamics is the recursive "
                         "(articulated-body) algorithm; leave --method out")
    qv, v, tv = (free_flyer_vector(r, x, opt) for x, opt in ((q, "--q"), (qd, "--qd"), (tau, "--tau")))
    a = floating_forward_dynamics(r, qv, v, tv)
    if json_out:
        print_json({"robot": r.name, "base": r.base, "method": method, "q": qv, "v": v, "tau": tv, "a": a})
        return
    console.print(Text.assemble((r.name, "bold"), "  direct dynamics, floating base (articulated-body algorithm)"))
    console.print(_vector_table("accelerations (base rows: R_0)", {"tau": tv, "a": a},
                                BASE_VELOCITY_NAMES + r.q_names))
