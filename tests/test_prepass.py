"""The `ast` pre-pass (gradfix/analysis/prepass.py): a rule runs on a file only when its
declared necessary condition holds there, and a file no rule may match is not parsed with
libcst. A condition that is not necessary would silently drop findings, so every golden case
with findings must pass the condition of each rule that fires in it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gradfix import engine as engine_module
from gradfix.analysis.prepass import facts_of
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine
from gradfix.rule import Rule

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def _expected_rules(case: Path) -> set[str]:
    rules = set()
    for line in case.with_suffix(".findings").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            rules.add(line.split()[1])
    return rules


CASES = sorted(p for p in GOLDEN.rglob("*.py") if not p.name.endswith(".fixed.py")
               and p.with_suffix(".findings").exists() and _expected_rules(p))


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


def test_every_rule_declares_a_condition():
    for rule in ALL_RULES:
        assert rule.may_match is not Rule.may_match, f"{rule.id} has no necessary condition (may_match)"


def test_golden_positives_pass_the_condition_of_each_rule_that_fires(engine):
    assert len(CASES) > 100
    by_id = {r.id: r for r in engine.rules}
    failures = []
    fired = set()
    for case in CASES:
        text = case.read_bytes().decode("utf-8")
        facts = facts_of(ast.parse(text), text)
        for rule_id in sorted(_expected_rules(case)):
            fired.add(rule_id)
            if not by_id[rule_id].may_match(facts):
                failures.append(f"{case.parent.name}/{case.name}: {rule_id}")
    assert not failures, "necessary condition false where the rule fires:\n" + "\n".join(failures)
    assert fired == set(by_id), set(by_id) - fired  # every rule's condition is exercised


def test_a_file_no_rule_can_match_is_not_parsed_with_libcst(engine, monkeypatch):
    source = (
        "import json\n\n\n"
        "def load(path):\n"
        "    with open(path) as fh:\n"
        "        return json.load(fh)\n\n\n"
        "class Config:\n"
        "    name = 'base'\n"
    )
    assert engine.rules_for(ast.parse(source), source) == []

    def no_parse(_source):
        raise AssertionError("libcst parse of a file no rule may match")

    monkeypatch.setattr(engine_module, "_cst_tree", no_parse)
    assert engine.lint_source(source, "plain.py") == ([], [])


def test_a_matching_file_runs_only_the_rules_that_may_match(engine, monkeypatch):
    source = (
        "import torch\n\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
    )
    ids = [r.id for r in engine.rules_for(ast.parse(source), source)]
    assert "GF301" in ids
    assert "GF201" not in ids and "GF305" not in ids  # no backward(), no .forward(
    findings, errors = engine.lint_source(source, "amp.py")
    assert [f.rule for f in findings] == ["GF301"] and errors == []


def test_a_syntax_error_is_still_reported(engine):
    findings, errors = engine.lint_source("def f(:\n    pass\n", "broken.py")
    assert findings == [] and len(errors) == 1 and errors[0].line == 1
