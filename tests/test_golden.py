"""Golden cases: real files compared byte for byte.

golden/<RULE>/<case>.py         input
golden/<RULE>/<case>.fixed.py   expected output with every offered fix applied (absent: unchanged)
golden/<RULE>/<case>.findings   expected findings, `LINE:COL RULE [verdict=V]` per line
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine, accept_all

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p for p in GOLDEN.rglob("*.py") if not p.name.endswith(".fixed.py"))


def case_id(p: Path) -> str:
    return f"{p.parent.name}/{p.stem}"


def expected_findings(case: Path) -> list[tuple[int, int, str]]:
    out = []
    for line in case.with_suffix(".findings").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pos, rule = line.split()[:2]
        ln, col = pos.split(":")
        out.append((int(ln), int(col), rule))
    return out


def read(p: Path) -> str:
    return p.read_bytes().decode("utf-8")


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


def test_golden_set_is_substantial():
    rules = {p.parent.name for p in CASES}
    for r in ("GF101", "GF102", "GF103", "GF104", "GF201"):
        assert r in rules
        pos = [p for p in CASES if p.parent.name == r and p.stem.startswith("pos_")]
        neg = [p for p in CASES if p.parent.name == r and p.stem.startswith("neg_")]
        assert len(pos) + len(neg) >= 6 and len(neg) >= 3, (r, len(pos), len(neg))
    assert (GOLDEN / "seeds" / "seed1_scenario.py").exists()
    assert (GOLDEN / "seeds" / "seed2_loop.py").exists()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_findings(engine, case):
    findings, errors = engine.lint_source(read(case), str(case))
    assert errors == []
    got = [(f.span.line, f.span.column, f.rule) for f in findings]
    assert got == expected_findings(case)
    if case.stem.startswith("neg_") and case.parent.name.startswith("GF"):
        assert case.parent.name not in {r for _, _, r in got}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rewrite_byte_for_byte(engine, case):
    source = read(case)
    fixed_path = case.with_name(case.stem + ".fixed.py")
    expected = read(fixed_path) if fixed_path.exists() else source
    result = engine.fix_source(source, str(case), accept_all)
    assert result.errors == []
    assert result.fixed == expected


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_applying_twice_changes_nothing(engine, case):
    once = engine.fix_source(read(case), str(case), accept_all).fixed
    twice = engine.fix_source(once, str(case), accept_all)
    assert twice.fixed == once
    assert not [c for c in twice.changes if c.applied]
