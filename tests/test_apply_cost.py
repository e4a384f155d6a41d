"""`apply` costs what `check` costs: fix_source parses and generates the whole file a bounded
number of times per round, whatever the number of fixes (counted operations, no clock)."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import libcst as cst
import pytest

from gradfix import engine as engine_mod
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine, accept_all
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

HEADER = "import torch\nimport torch.nn as nn\n"
GATE = '''

class Gate{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        s = torch.sigmoid(self.fc(x))
        s *= 2
        return x * s


def plain_{i}(values):
    total = 0
    for v in values:
        total += v
    return total
'''


def source(n: int) -> str:
    return HEADER + "".join(GATE.format(i=i) for i in range(n))


class Counted:
    """Characters handed to libcst's parser and to CPython's (ast.parse, or compile() of a
    text) during one fix_source."""

    def __init__(self, monkeypatch):
        self.parsed = 0
        self.compiled = 0
        real_parse, real_compile, real_ast_parse = cst.parse_module, compile, ast.parse

        def parse(code, *a, **kw):
            self.parsed += len(code)
            return real_parse(code, *a, **kw)

        def compile_(code, *a, **kw):
            if isinstance(code, str):
                self.compiled += len(code)
            return real_compile(code, *a, **kw)

        def ast_parse(code, *a, **kw):
            self.compiled += len(code)
            return real_ast_parse(code, *a, **kw)

        monkeypatch.setattr(engine_mod.cst, "parse_module", parse)
        monkeypatch.setattr(engine_mod, "compile", compile_, raising=False)
        monkeypatch.setattr(engine_mod.ast, "parse", ast_parse)


@pytest.fixture(scope="module")
def gf101():
    return Engine([r for r in ALL_RULES if r.id == "GF101"])


@pytest.mark.parametrize("n", [3, 24])
def test_whole_file_work_does_not_grow_with_the_number_of_fixes(n, gf101, monkeypatch):
    text = source(n)
    counted = Counted(monkeypatch)
    before = dict(engine_mod.OPERATIONS)
    result = gf101.fix_source(text, "big.py", accept_all)
    ops = {k: engine_mod.OPERATIONS[k] - before[k] for k in before}
    assert sum(c.applied for c in result.changes) == n
    assert result.fixed.count("s = s * 2") == n and "s *= 2" not in result.fixed
    # one round applies every fix, the next finds nothing: two analyses, one check and one
    # generation of the combined output, whatever n is; the second round analyses the trees
    # that check parsed, so the file is parsed once to start the rounds
    assert ops["file_parses"] == 1 and ops["file_codegens"] == 1
    assert ops["round_parses"] == 1 and ops["analyses"] == 2
    # each fix is checked on its own function only
    assert ops["local_checks"] == n
    assert ops["local_chars"] < len(text) / 2
    # everything libcst parsed: the first round, the combined output, the n small functions
    assert counted.parsed < 2.5 * len(text)
    # CPython's parser: the original (compiled, then parsed for the first round), the combined output
    assert counted.compiled < 3.5 * len(text)


DOCS = RuleDocs("w", "y", "e", "f", "s", "v")


class FutureInTheMiddle(Rule):
    """Test rule: `pass` becomes `from __future__ import annotations`, which compiles alone but
    not after other statements (a fix only the whole file can refuse)."""

    id, name, summary, docs = "GF904", "future", "future", DOCS

    def check(self, ctx):
        for stmt in ctx.module.body:
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Pass):
                new = cst.parse_statement("from __future__ import annotations\n")
                yield ctx.finding(stmt, "future", ctx.fix("future", [Edit(stmt, new)], Safety.SAFE))


class RenameZ(Rule):
    id, name, summary, docs = "GF905", "rename", "rename", DOCS

    def check(self, ctx):
        for stmt in ctx.module.body:
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
                target = stmt.body[0].targets[0].target
                if isinstance(target, cst.Name) and target.value == "z":
                    yield ctx.finding(target, "z", ctx.fix("w", [Edit(target, cst.Name("w"))], Safety.SAFE))


def test_a_fix_that_parses_alone_but_not_in_the_file_is_dropped_and_the_others_kept():
    result = Engine([FutureInTheMiddle, RenameZ]).fix_source("z = 1\npass\n", "t.py", accept_all)
    assert result.fixed == "w = 1\npass\n"
    assert [(c.rule, c.applied) for c in result.changes] == [("GF905", True)]
    assert any("GF904 fix dropped: its output does not parse" in e.message and e.line == 2 for e in result.errors)


class RecordingVerifier:
    def __init__(self):
        self.rewritten = []

    def verify_many(self, requests):
        self.rewritten.extend(r.rewritten for r in requests)
        return [SimpleNamespace(verdict="equivalent", detail="", unit=None) for _ in requests]


def test_a_verifier_gets_the_text_with_only_that_fix(gf101):
    text = source(2)
    verifier = RecordingVerifier()
    result = gf101.fix_source(text, "big.py", accept_all, verifier=verifier)
    assert sum(c.applied for c in result.changes) == 2
    first, second = text.index("s *= 2"), text.rindex("s *= 2")
    assert verifier.rewritten == [text[:first] + "s = s * 2" + text[first + 6:],
                                  text[:second] + "s = s * 2" + text[second + 6:]]
