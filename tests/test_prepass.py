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


# -- conditions decided per scope (analysis/gradscopes.py) ------------------------------------

def _ids(engine, source):
    return {r.id for r in engine.rules_for(ast.parse(source), source)}


LIBRARY_HELPERS = (
    "import torch\n\n\n"
    "def count(batch, totals):\n"
    "    totals['seen'] += 1\n"
    "    batch[0] = batch[0].clamp_(0, 1)\n"
    "    return totals\n\n\n"
    "class Meter:\n"
    "    def update(self, value):\n"
    "        self.total += value\n"
    "        self.values[-1] = value\n"
)


def test_in_place_ops_where_nothing_may_require_grad_skip_gf101_and_libcst(engine, monkeypatch):
    # augmented and item assignments and a `clamp_()` call, but no scope holds a parameter, a module call,
    # a requires_grad tensor, or is called with one: GF101's flows could never show a save
    assert "GF101" not in _ids(engine, LIBRARY_HELPERS)
    assert engine.rules_for(ast.parse(LIBRARY_HELPERS), LIBRARY_HELPERS) == []

    def no_parse(_source):
        raise AssertionError("libcst parse of a file no rule may match")

    monkeypatch.setattr(engine_module, "_cst_tree", no_parse)
    assert engine.lint_source(LIBRARY_HELPERS, "helpers.py") == ([], [])


def test_a_grad_source_reaches_a_helper_through_its_call_site(engine):
    # `norm` has no source of its own: its argument requires grad only because `forward` passes a
    # module's output, so the condition follows the call (and the finding comes out)
    source = (
        "import torch\nimport torch.nn as nn\n\n\n"
        "def norm(f):\n"
        "    n = f.norm(dim=1, keepdim=True)\n"
        "    f /= n\n"
        "    return f\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\n"
        "    def forward(self, x):\n"
        "        return norm(self.fc(x))\n"
    )
    assert "GF101" in _ids(engine, source)
    findings, _ = engine.lint_source(source, "net.py")
    assert [(f.rule, f.span.line) for f in findings] == [("GF101", 7)]
    # the same helper called only with plain values: no scope that may hold a value requiring grad
    # has an in-place op
    unused = source.replace("return norm(self.fc(x))", "return self.fc(x) + norm(torch.ones(4))")
    assert "GF101" in _ids(engine, unused)  # `forward` still calls `norm` (by name): kept, over-approximated
    alone = source.split("class Net")[0] + "\n\ndef main():\n    return norm(torch.ones(4, 4))\n"
    assert "GF101" not in _ids(engine, alone)


def test_gf209_needs_a_receiver_a_flow_may_take_for_a_tensor(engine):
    base = "import torch\n\nSEEN = set()\n\n\ndef note(x):\n    {stmt}\n    return x\n"
    assert "GF209" not in _ids(engine, base.format(stmt="SEEN.add(x)"))       # a name the scope does not bind
    assert "GF209" not in _ids(engine, base.format(stmt="self.model.to(x)"))  # a plain attribute
    assert "GF209" not in _ids(engine, base.format(stmt="x.to('cuda')"))      # a parameter nothing calls with
    assert "GF209" in _ids(engine, base.format(stmt="x.to('cuda')") + "\n\nnote(torch.ones(2))\n")
    assert "GF209" in _ids(engine, base.format(stmt="x.grad.clamp(-1, 1)"))   # a `.grad` chain


def test_gf210_optimizer_clause_needs_parameters_passed_to_it(engine):
    built = "import torch\n\n\ndef make(model):\n    return torch.optim.SGD({}, lr=0.1)\n"
    assert "GF210" not in _ids(engine, built.format("[]"))
    assert "GF210" not in _ids(engine, built.format("model.parameters()"))  # a return, not a binding
    assert "GF210" in _ids(engine, built.format("model.parameters()").replace("return ", "opt = "))


def test_a_method_under_a_condition_of_the_class_body_is_a_scope(engine):
    # FileIndex.scopes finds a method defined under an `if` of the class body: its flow is analysed,
    # so its in-place op and its grad source count
    source = (
        "import torch.nn as nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\n"
        "    if True:\n"
        "        def forward(self, x):\n"
        "            h = self.fc(x).sigmoid()\n"
        "            h *= 2\n"
        "            return h\n"
    )
    assert "GF101" in _ids(engine, source)
    findings, _ = engine.lint_source(source, "net.py")
    assert ("GF101", 12) in [(f.rule, f.span.line) for f in findings]


def test_an_inplace_module_bound_by_an_annotated_assignment_counts(engine):
    # `_inplace_module` finds the module through the module-level binding; the scope calling it has no
    # in-place op of its own
    source = (
        "import torch\nimport torch.nn as nn\n\n\n"
        "ACT: nn.Module = nn.ReLU(inplace=True)\n\n\n"
        "def head(x, w):\n"
        "    h = torch.sigmoid(x @ w)\n"
        "    return ACT(h)\n\n\n"
        "def main():\n"
        "    return head(torch.ones(2, 2), nn.Parameter(torch.ones(2, 2)))\n"
    )
    assert "GF101" in _ids(engine, source)
    findings, _ = engine.lint_source(source, "head.py")
    assert [(f.rule, f.span.line) for f in findings] == [("GF101", 10)]
