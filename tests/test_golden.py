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


class Memo:
    """One engine call per case and question, shared by the tests that ask it (a module-scoped
    table: the results are a function of the case's text and the engine alone)."""

    def __init__(self, engine):
        self.engine = engine
        self._lint: dict = {}
        self._fixed: dict = {}

    def lint(self, case: Path):
        if case not in self._lint:
            self._lint[case] = self.engine.lint_source(read(case), str(case))
        return self._lint[case]

    def fixed(self, case: Path):
        if case not in self._fixed:
            self._fixed[case] = self.engine.fix_source(read(case), str(case), accept_all)
        return self._fixed[case]


@pytest.fixture(scope="module")
def memo(engine):
    return Memo(engine)


def test_golden_set_is_substantial():
    rules = {p.parent.name for p in CASES}
    from gradfix.codemods import RULES_BY_ID

    for r in RULES_BY_ID:
        assert r in rules
        pos = [p for p in CASES if p.parent.name == r and p.stem.startswith("pos_")]
        neg = [p for p in CASES if p.parent.name == r and p.stem.startswith("neg_")]
        if r in ("GF101", "GF102", "GF103", "GF104", "GF201"):
            assert len(pos) + len(neg) >= 6 and len(neg) >= 3, (r, len(pos), len(neg))
        else:
            assert len(pos) >= 4 and len(neg) >= 4, (r, len(pos), len(neg))
    assert (GOLDEN / "seeds" / "seed1_scenario.py").exists()
    assert (GOLDEN / "seeds" / "seed2_loop.py").exists()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_findings(memo, case):
    findings, errors = memo.lint(case)
    assert errors == []
    got = [(f.span.line, f.span.column, f.rule) for f in findings]
    assert got == expected_findings(case)
    if case.stem.startswith("neg_") and case.parent.name.startswith("GF"):
        assert case.parent.name not in {r for _, _, r in got}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rewrite_byte_for_byte(memo, case):
    source = read(case)
    fixed_path = case.with_name(case.stem + ".fixed.py")
    expected = read(fixed_path) if fixed_path.exists() else source
    result = memo.fixed(case)
    assert result.errors == []
    assert result.fixed == expected


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_applying_twice_changes_nothing(engine, memo, case):
    once = memo.fixed(case).fixed
    twice = engine.fix_source(once, str(case), accept_all)
    assert twice.fixed == once
    assert not [c for c in twice.changes if c.applied]


# -- verification ------------------------------------------------------------

from gradfix.engine import APPLIED_VERDICTS, Policy, policy_decider  # noqa: E402
from gradfix.model import Verdict  # noqa: E402


def expected_verdicts(case: Path) -> dict[tuple[int, int, str], str]:
    out = {}
    for line in case.with_suffix(".findings").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2].startswith("verdict="):
            ln, col = parts[0].split(":")
            out[(int(ln), int(col), parts[1])] = parts[2].split("=", 1)[1]
    return out


VERIFIED_CASES = [c for c in CASES if expected_verdicts(c)]


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


@pytest.fixture(scope="module")
def applied(engine, verifier):
    """What `gradfix apply` does to every verified golden case (its policy decides), and the
    verdicts of the first round's changes, which that policy is shown: one verified run per case."""
    runs = {}
    for case in VERIFIED_CASES:
        first: list = []
        policy = policy_decider(Policy())

        def decide(changes, first=first, policy=policy):
            if not first:
                first.append({(c.finding.span.line, c.finding.span.column, c.rule): c.verdict.value for c in changes})
            return policy(changes)

        res = engine.fix_source(read(case), str(case), decide, verifier=verifier)
        runs[case] = (res, first[0] if first else {})
    return runs


@pytest.fixture(scope="module")
def verdicts(applied):
    """Round-one verdicts of every golden case."""
    return {case: table for case, (_res, table) in applied.items()}


def test_every_fixable_positive_declares_a_verdict(memo):
    for case in CASES:
        findings, _ = memo.lint(case)
        fixable = {(f.span.line, f.span.column, f.rule) for f in findings if f.fixable}
        assert fixable <= set(expected_verdicts(case)), case


@pytest.mark.parametrize("case", VERIFIED_CASES, ids=case_id)
def test_declared_verdict(verdicts, case):
    assert verdicts[case] == expected_verdicts(case)


def test_every_verdict_kind_is_produced(verdicts, engine):
    seen = {v for table in verdicts.values() for v in table.values()}
    assert {"equivalent", "fixes-crash", "fixes-hazard", "changes-behaviour", "failed", "untestable"} <= seen
    # and `not-verified` when verification is off
    res = engine.fix_source(read(GOLDEN / "seeds" / "seed1_scenario.py"), "s.py", policy_decider(Policy()))
    assert {c.verdict for c in res.changes} == {Verdict.NOT_VERIFIED}


def test_first_seed_net_rewrite_fixes_crash(verdicts):
    table = verdicts[GOLDEN / "seeds" / "seed1_scenario.py"]
    assert [v for (ln, _, rule), v in table.items() if rule == "GF101"] == ["fixes-crash"]


@pytest.mark.parametrize("case", VERIFIED_CASES, ids=case_id)
def test_apply_with_verification(applied, case):
    """What `gradfix apply` writes: verified changes only; a `failed` trap leaves the file untouched."""
    result = applied[case][0]
    declared = set(expected_verdicts(case).values())
    applied = {v.value for v in APPLIED_VERDICTS}
    source = read(case)
    fixed_path = case.with_name(case.stem + ".fixed.py")
    if declared <= applied:
        assert result.fixed == read(fixed_path)
    elif not declared & applied:
        assert result.fixed == source
    for c in result.changes:
        assert c.applied == (c.verdict in APPLIED_VERDICTS)
