"""The counting conventions of the papers (Khalil & Dombre, Mata et al., Kozłowski) as report options: each rule
changes the counts exactly where it differs from robodyn's, and the default report is robodyn's."""

import json

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis.opcount import (
    CONVENTIONS, SEED_FORMULAS, count_operations, counting_convention, counting_robot, customized_report,
    opcount_report, program_count,
)
from robodyn.dynamics.trace import COST, record, tally


def test_every_convention_reads_every_operation_of_the_ir():
    for rule in CONVENTIONS.values():
        assert set(rule.columns) == set(COST), rule.name
        assert rule.source and rule.rule
    ops = list(COST)
    assert CONVENTIONS["robodyn"].count(ops) == tally(ops)  # the default is robodyn's one counter
    with pytest.raises(rd.InputError, match="convention = 'luh'; choose one of robodyn, khalil_dombre, mata, kozlowski"):
        counting_convention("luh")
    with pytest.raises(rd.InputError, match="convention"):
        opcount_report(2, convention="luh")


def test_each_rule_changes_only_its_own_operations():
    ops = ["mul", "cmul", "div", "rdiv", "divc", "cdiv", "add", "addc", "sin", "cos", "sqrt", "sign", "abs", "let"]
    base = CONVENTIONS["robodyn"].count(ops)
    assert (base["mul"], base["div"], base["add"], base["sqrt"], base["other"]) == (6, 4, 2, 1, 0)
    assert CONVENTIONS["khalil_dombre"].count(ops) == {**base, "other": 1}  # the sign function
    assert CONVENTIONS["mata"].count(ops) == {**base, "mul": 7}  # the square root is a product
    assert CONVENTIONS["kozlowski"].count(ops) == {**base, "mul": 2}  # divisions apart


@pytest.mark.parametrize("kind, method", [("forward", "cholesky"), ("forward", "recursive"),
                                          ("inverse", "newton_euler"), ("inertia", "composite")])
def test_conventions_on_the_generic_counts(kind, method):
    tally_, _, _ = count_operations(counting_robot(4), kind, method)
    counts = {name: rule.count(tally_.ops) for name, rule in CONVENTIONS.items()}
    base = counts["robodyn"]
    assert (base["mul"], base["add"], base["div"], base["sqrt"]) == (tally_.mul, tally_.add, tally_.div, tally_.sqrt)
    assert counts["mata"]["mul"] == base["mul"] + base["sqrt"]
    assert counts["kozlowski"]["mul"] == base["mul"] - base["div"]
    assert counts["khalil_dombre"] == base  # no sign function in a friction-less evaluation
    assert all(c["add"] == base["add"] and c["div"] == base["div"] for c in counts.values())
    if method == "cholesky":  # Mata's Table 3 Cholesky row: n square roots among the products
        assert base["sqrt"] == 4 and counts["mata"]["mul"] == base["mul"] + 4
    if method in ("recursive", "cholesky"):
        assert base["div"] > 0 and counts["kozlowski"]["mul"] < base["mul"]
    else:
        assert base["div"] == 0 and base["sqrt"] == 0 and all(c == base for c in counts.values())


def test_sign_functions_count_under_khalil_and_dombre():
    """Khalil & Dombre §9.6.3: Coulomb friction costs n sign functions; the recorded model's sign nodes."""
    program = record(lambda b, phase, qd: [2.0 * b.sign(qd[0]) + 0.5 * qd[0], 3.0 * b.sign(qd[1])], {"qd": 2})
    assert program.count()["other"] == 0 and program_count(program)["other"] == 0
    assert program_count(program, "khalil_dombre")["other"] == 2
    assert {k: v for k, v in program_count(program, "khalil_dombre").items() if k != "other"} == \
        {k: v for k, v in program.count().items() if k != "other"}


@pytest.fixture(scope="module")
def reports():
    return {name: opcount_report(6, methods=["recursive", "spatial_operator", "newton_euler"], convention=name)
            for name in CONVENTIONS}


def test_default_report_is_robodyns(reports):
    default = opcount_report(6, methods=["recursive", "spatial_operator", "newton_euler"])
    assert default.convention == "robodyn" and default.rows() == reports["robodyn"].rows()
    for c in default.counts:
        assert np.array_equal(c.series("mul"), [t.mul for t in c.tallies])
        assert np.array_equal(c.series("mul", "robodyn"), c.series("mul"))


def test_report_rows_under_each_convention(reports):
    def row(name, method, op, paper):
        return next(r for r in reports[name].rows() if r[0] == method and r[1] == op and paper in r[4])

    robodyn = row("robodyn", "forward spatial_operator", "mul", "Kozlowski")
    kozlowski = row("kozlowski", "forward spatial_operator", "mul", "Kozlowski")
    # Kozłowski prints 264n − 349 multiplications and 6n − 10 divisions apart (Table 2)
    assert (robodyn[5], robodyn[6], robodyn[8]) == ("270n − 359", "1261", "kozlowski")
    assert (kozlowski[5], kozlowski[6], kozlowski[8]) == ("264n − 349", "1235", "kozlowski")
    fwd = {name: next(c for c in rep.counts if (c.kind, c.method) == ("forward", "spatial_operator"))
           for name, rep in reports.items()}
    div6 = fwd["robodyn"].series("div")[5]
    assert int(kozlowski[3]) == int(robodyn[3]) - div6 > 0
    assert int(kozlowski[7]) == int(kozlowski[3]) - 1235
    ne = {name: row(name, "inverse newton_euler", "mul", "Khalil") for name in CONVENTIONS}
    assert len({r[3] for r in ne.values()}) == 1 and ne["robodyn"][8] == "khalil_dombre"  # no rule differs there
    assert [f.for_convention("robodyn")[1] for f in SEED_FORMULAS[("forward", "spatial_operator")]] == [(270, -359)]


def test_customized_report_under_kozlowskis_rule():
    rows = {name: [r for r in customized_report(n_fit=0, convention=name) if r["model"] == "kozlowski_forward"]
            for name in ("robodyn", "kozlowski")}
    for ours, koz in zip(rows["robodyn"], rows["kozlowski"]):
        assert (ours["published_mul"], koz["published_mul"]) == (1261, 1235)
        assert (ours["published_mul_formula"], koz["published_mul_formula"]) == ("270n − 359", "264n − 349")
        assert koz["mul"] < ours["mul"] and koz["add"] == ours["add"] and koz["convention"] == "kozlowski"
        assert koz["published_rule"] == "kozlowski"


def test_cli_convention_option():
    from typer.testing import CliRunner

    from robodyn.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["opcount", "--n-max", "3", "--methods", "cholesky", "--no-customized", "--json",
                              "--convention", "mata"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    chol = next(c for c in out["counts"] if c["method"] == "cholesky")
    ref = [count_operations(counting_robot(n, seed=n), "forward", "cholesky")[0] for n in (1, 2, 3)]
    assert out["convention"] == "mata" and chol["mul"] == [t.mul + t.sqrt for t in ref]
    res = runner.invoke(app, ["opcount", "--n-max", "2", "--convention", "luh", "--no-customized"])
    assert res.exit_code == 2 and "convention = 'luh'; choose one of robodyn" in res.output
