"""The model as Khalil & Dombre's listings print it (Example 9.4, Appendix 7): one ``NAME = expression`` a line."""

from __future__ import annotations

from robodyn.sanitize import comment
from robodyn.symbolic.codegen.printer import Language, to_source

SEED = Language("listing", {"sin": "sin", "cos": "cos", "sign": "sign", "exp": "exp", "abs": "abs"}, "**")


def listing(model, title: str) -> str:
    ops = model.operation_count()
    lines = [
        f"{title}",
        f"Robot: {comment(model.robot.name)} ({''.join('RP-'[s] for s in model.robot.sigma)}), "
        f"{model.parameters} inertial parameters",
        f"Inputs: {', '.join(a.name for a in model.arguments)}",
    ]
    if model.column_names:
        lines.append(f"Columns (parameters of Gamma = Phi K): {', '.join(model.column_names)}")
    lines.append("")
    if model.constants:
        lines.append("Constants:")
        lines += [f"    {s} = {v}" for s, v in sorted(model.constants.items(), key=lambda kv: str(kv[0]))]
        lines.append("")
    lines.append("Equations:")
    lines += [f"{s} = {to_source(e, SEED)}" for s, e in model.program.assignments]
    lines.append("")
    lines.append(f"Output {model.output_shape}: " + ", ".join(to_source(o, SEED) for o in model.outputs))
    lines.append("")
    extra = f", {ops['other']} other functions" if "other" in ops else ""
    lines.append(f"Number of operations: {ops['mul']} multiplications, {ops['add']} additions, "
                 f"{ops['sincos']} sine/cosine{extra}")
    return "\n".join(lines) + "\n"
