"""User-facing text names the authors (Khalil & Dombre, Mata et al., ...), never "the seed" or internal files.

Checked: README.md, docs/*.md, the built-in robot files, and every string literal of src/ (docstrings users read
with help(), error messages, CLI output, templates of generated files).  The seed of a random generator
(``seed=``, ``--seed N``, "seeded") is another word and allowed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_WORD = re.compile(r"\bseeds?\b", re.IGNORECASE)
#: Random-generator contexts of the word, looked for around each occurrence.
_RANDOM = re.compile(
    r"--seed|\bseed\s*[=:)]|\.seed\b|samples, seed\b|random[^.\n]*\bseed|\bseed of the random|\bseed \{|\bseed \d+[,)]"
    r"|\bseed\b[^.\n]*\b(deterministic|reproducible)|generator seed|seed: int|\bseed \d+ samples",
    re.IGNORECASE,
)
#: Internal names of the source documents and reference tables.
_FILES = re.compile(
    r"shared/seeds|shared/reference|khalil-dombre-ch9|mata-2002|dellin-2008|deluca-dynamic|kozlowski-kalman"
    r"|published-robot-parameters"
)


def _hits(text: str) -> list[str]:
    if text.strip().lower() == "seed":  # a key or option name of the random seed ({"seed": 0})
        return []
    out = [m.group(0) for m in _FILES.finditer(text)]
    for m in _WORD.finditer(text):
        window = text[max(0, m.start() - 60) : m.end() + 30]
        if not _RANDOM.search(window):
            out.append(text[max(0, m.start() - 20) : m.end() + 20].replace("\n", " "))
    return out


def _pages():
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").glob("*.md"))
    yield from sorted((ROOT / "src" / "robodyn" / "robots").glob("*.yaml"))


def _python_strings():
    for path in sorted((ROOT / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield path, node.lineno, node.value


@pytest.mark.parametrize("path", list(_pages()), ids=lambda p: p.name)
def test_pages_name_the_authors_not_the_seed(path):
    bad = [(n, _hits(line)) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if _hits(line)]
    assert not bad, f"{path.relative_to(ROOT)}: name the authors (Khalil & Dombre, Mata et al., ...) instead: {bad}"


def test_strings_in_the_code_name_the_authors_not_the_seed():
    bad = [f"{p.relative_to(ROOT)}:{line}: {_hits(s)}" for p, line, s in _python_strings() if _hits(s)]
    assert not bad, "user-facing strings that say 'seed' or name internal files:\n" + "\n".join(bad)


def test_the_check_tells_the_two_words_apart():
    for text in ("as the seed's listings print it", "the seeds' formulas", "Seed remarks", "(seed 889 / 653)",
                 "| robodyn | seed |", "see shared/seeds/mata-2002-gibbs-appell.txt"):
        assert _hits(text), text
    for text in ("random generator seed (deterministic result)", "--seed N", "seeded; default 2p/n + 20",
                 "bounds (2000 samples, seed 1, 2-norms)", "seed: int", "rng = np.random.default_rng(seed)"):
        assert not _hits(text), text


# ---- docs state what holds now; the README is an entry point -----------------------------------------------------
#: Phrases that date a statement by the development history instead of stating what holds.
_HISTORY = re.compile(
    r"\b(this|last|previous|earlier|next|that) rounds?\b|\brounds? ago\b|\bround-by-round\b"
    r"|\b(two|three|several|few) rounds\b|\b(since|until) (then|now)\b",
    re.IGNORECASE,
)
README_MAX_LINES = 250


def _history(text: str) -> list[str]:
    return [m.group(0) for m in _HISTORY.finditer(text)]


@pytest.mark.parametrize("path", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_pages_state_what_holds_now(path):
    text = path.read_text(encoding="utf-8")
    bad = [(n, _history(line)) for n, line in enumerate(text.splitlines(), 1) if _history(line)]
    bad += [("across lines", h) for h in _history(" ".join(text.split())) if h.lower() not in
            {x.lower() for _, xs in bad for x in xs}]
    assert not bad, f"{path.relative_to(ROOT)}: say what holds now (benchmarks/README.md keeps the history): {bad}"


def test_the_history_check_finds_the_phrases():
    for text in ("this round's run", "the previous round", "25 µs two rounds ago", "Until this round it",
                 "in the last two rounds", "since then the kernel"):
        assert _history(text), text
    for text in ("best of 5 rounds", "round-off of an", "a round trip", "rounded to 4 digits", "surrounds"):
        assert not _history(text), text


def test_the_readme_is_an_entry_point():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; details belong in docs/ and benchmarks/"
    performance = "\n".join(lines).split("\n## Performance", 1)[1].split("\n## ", 1)[0]
    separators = [line for line in performance.splitlines() if line.startswith("|---")]
    assert len(separators) == 1, "README's Performance section shows one table"


def test_the_readme_layer_table_is_the_enforced_one():
    from tests.test_architecture import LAYERS

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Architecture", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\|\s*\d+\s*\|", line)]
    shown = [tuple(f"robodyn.{m}" if m != "robodyn" else m for m in re.findall(r"`([\w.]+)`", row.split("|")[2]))
             for row in rows]
    assert shown == [tuple(layer) for layer in LAYERS]
