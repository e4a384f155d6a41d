"""Engine guarantees: fixpoint with a bound, broken fixes dropped and reported,
rejected changes not offered again, overlapping fixes applied one round at a time."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from gradfix.codemods import ALL_RULES
from gradfix.engine import MAX_ROUNDS, Decision, Engine, accept_all
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

DOCS = RuleDocs("w", "y", "e", "f", "s", "v")


class RenameXToY(Rule):
    """Test rule: every `x` name becomes `y`, and `y` becomes `z` (a fix that exposes another)."""

    id, name, summary, docs = "GF901", "rename", "rename", DOCS

    def check(self, ctx):
        for node in _names(ctx.module):
            if node.value in ("x", "y"):
                new = "y" if node.value == "x" else "z"
                yield ctx.finding(node, f"{node.value} -> {new}", ctx.fix("rename", [Edit(node, cst.Name(new))], Safety.SAFE))


class BreakSyntax(Rule):
    """Test rule whose fix produces code that does not parse."""

    id, name, summary, docs = "GF902", "breaker", "breaker", DOCS

    def check(self, ctx):
        for stmt in ctx.module.body:
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Pass):
                bad = cst.SimpleStatementLine([cst.Expr(cst.Name("return"))])
                yield ctx.finding(stmt, "breaks", ctx.fix("break", [Edit(stmt, bad)], Safety.SAFE))


class Forever(Rule):
    """Test rule that never converges: a -> b -> a."""

    id, name, summary, docs = "GF903", "forever", "forever", DOCS

    def check(self, ctx):
        for node in _names(ctx.module):
            if node.value in ("a", "b"):
                new = "b" if node.value == "a" else "a"
                yield ctx.finding(node, "flip", ctx.fix("flip", [Edit(node, cst.Name(new))], Safety.SAFE))


def _names(module):
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            yield node
        stack.extend(node.children)


def test_fixpoint_applies_exposed_fixes():
    result = Engine([RenameXToY]).fix_source("x = 1\n", "t.py", accept_all)
    assert result.fixed == "z = 1\n"
    assert [c.applied for c in result.changes] == [True, True]


def test_broken_fix_is_dropped_and_reported():
    result = Engine([BreakSyntax]).fix_source("pass\n", "t.py", accept_all)
    assert result.fixed == "pass\n"
    assert len(result.errors) == 1
    assert "GF902 fix dropped: its output does not parse" in result.errors[0].message
    assert result.errors[0].line == 1


def test_non_converging_fixes_stop_at_the_bound():
    result = Engine([Forever]).fix_source("a = 1\n", "t.py", accept_all)
    assert "did not converge" in result.errors[0].message
    assert len([c for c in result.changes if c.applied]) == MAX_ROUNDS


def test_rejected_change_is_not_offered_again():
    calls = []

    def decide(changes):
        calls.append(len(changes))
        return Decision([False] * len(changes))

    result = Engine([RenameXToY]).fix_source("x = 1\n", "t.py", decide)
    assert calls == [1]
    assert result.fixed == "x = 1\n"
    assert result.changes[0].applied is False


def test_stop_keeps_accepted_changes():
    def decide(changes):
        return Decision([True] + [False] * (len(changes) - 1), stop=True)

    result = Engine([RenameXToY]).fix_source("x = 1\nq = x\n", "t.py", decide)
    assert result.stopped
    assert result.fixed == "y = 1\nq = x\n"


def test_change_lines_refer_to_the_original_file():
    # `self.fc(x)` requires grad (a module with weights), so sigmoid and tanh save their outputs
    src = "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n" \
          "        h = torch.sigmoid(self.fc(x))\n        h *= 2\n        g = torch.tanh(h)\n        g /= 3\n" \
          "        return g\n\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n"
    result = Engine(ALL_RULES).fix_source(src, "t.py", accept_all)
    assert sorted(c.line for c in result.changes if c.applied) == [8, 10]
    assert "h = h * 2" in result.fixed and "g = g / 3" in result.fixed


def test_lint_reports_syntax_error_with_python_line():
    findings, errors = Engine(ALL_RULES).lint_source("x = 1\ndef f(:\n", "t.py")
    assert findings == []
    assert errors[0].line == 2 and errors[0].message.startswith("syntax error")


def test_deeply_nested_input_is_an_error_not_a_crash():
    findings, errors = Engine(ALL_RULES).lint_source("x = " + "(" * 3000 + "1" + ")" * 3000 + "\n", "t.py")
    assert findings == [] and errors and errors[0].path == "t.py"


def test_a_failing_rule_is_reported_and_the_others_still_run():
    engine = Engine(ALL_RULES)
    broken = next(r for r in engine.rules if r.id == "GF101")

    def boom(ctx):
        raise ValueError("boom")
        yield  # pragma: no cover

    broken.check = boom
    source = (Path(__file__).resolve().parent.parent / "golden" / "seeds" / "seed1_scenario.py").read_text()
    findings, errors = engine.lint_source(source, "seed.py")
    assert [e.message for e in errors] == ["internal error in GF101 (ValueError: boom); the other rules ran"]
    assert {f.rule for f in findings} >= {"GF102", "GF103"} and "GF101" not in {f.rule for f in findings}
    result = engine.fix_source(source, "seed.py", accept_all)
    assert any("internal error in GF101" in e.message for e in result.errors)
