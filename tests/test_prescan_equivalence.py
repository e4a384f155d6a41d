"""The pre-pass may only skip work, never findings: on every golden file and on constructed cases, the
rules its conditions leave out (analysis/prepass.py, analysis/gradscopes.py) report nothing when they are
run anyway, so the findings with the pre-pass equal the findings without it. bench/same_findings.py
makes the same comparison on the survey trees and the pinned corpus, version against version."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gradfix import engine as engine_module
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


def _without_prepass(engine, source: str, path: str) -> list:
    tree = ast.parse(source)
    return engine._findings(engine_module._cst_tree(source), source, path, tree, rules=list(engine.rules))


# the rules whose conditions are decided per scope or per statement (analysis/gradscopes.py, prepass.py's
# `module_init_stores`); the others' conditions are on names alone (tests/test_prepass.py)
PER_SCOPE = ("GF101", "GF102", "GF209", "GF304")


def test_rules_left_out_report_nothing_on_any_golden_file(engine):
    files = sorted(p for p in GOLDEN.rglob("*.py") if not p.name.endswith(".fixed.py"))
    assert len(files) > 300
    rules = [r for r in engine.rules if r.id in PER_SCOPE]
    wrong, skipped = [], 0
    for case in files:
        text = case.read_bytes().decode("utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        kept = {r.id for r in engine.rules_for(tree, text, str(case))}
        dropped = [r for r in rules if r.id not in kept]
        if not dropped:
            continue
        skipped += len(dropped)
        found = engine._findings(engine_module._cst_tree(text), text, str(case), tree, rules=dropped)
        wrong += [f"{case.relative_to(GOLDEN)}:{f.span.line} {f.rule}" for f in found]
    assert not wrong, "a rule the pre-pass left out reports:\n" + "\n".join(wrong)
    assert skipped > 200  # the per-scope conditions do leave rules out (so this compares something)


def _same(engine, source: str, path: str = "case.py") -> tuple[set[str], list]:
    """(ids kept, findings) with the pre-pass, after checking them equal to the findings without it."""
    with_prepass, errors = engine.lint_source(source, path)
    assert errors == []
    assert [f.to_record() for f in with_prepass] == [f.to_record() for f in _without_prepass(engine, source, path)]
    return {r.id for r in engine.rules_for(ast.parse(source), source, path)}, with_prepass


# -- GF209: the receiver of a discarded call ----------------------------------------------------

GF209_CASE = (
    "import torch\n{imports}\n\n"
    "def log(x: torch.Tensor):\n"
    "    seen = {value}\n"
    "    seen.add(1)\n"
    "    return x\n\n\n"
    "log(torch.ones(2))\n"
)


@pytest.mark.parametrize("value", ["set()", "[]", "{}", "'name'", "(1, 2)", "len(x) > 2", "sorted(x)"])
def test_gf209_skips_a_name_bound_only_to_a_value_that_is_never_a_tensor(engine, value):
    kept, found = _same(engine, GF209_CASE.format(imports="", value=value))
    assert "GF209" not in kept and found == []


@pytest.mark.parametrize("value", ["torch.zeros(3)", "x", "x[0]", "x.T", "-x", "x * 2"])
def test_gf209_keeps_a_name_that_may_be_bound_to_a_tensor(engine, value):
    kept, found = _same(engine, GF209_CASE.format(imports="", value=value))
    assert "GF209" in kept and [f.rule for f in found] == ["GF209"]


def test_gf209_keeps_a_builtin_name_the_file_rebinds(engine):
    # `set` is torch.zeros here: the call classifies as a tensor, and the discarded add is reported
    kept, found = _same(engine, GF209_CASE.format(imports="from torch import zeros as set", value="set(3)"))
    assert "GF209" in kept and [f.rule for f in found] == ["GF209"]
    kept, found = _same(engine, GF209_CASE.format(imports="from torch import *", value="set(3)"))
    assert "GF209" in kept


def test_gf209_for_target_over_parameters_is_a_tensor(engine):
    source = (
        "import torch.nn as nn\n\n\n"
        "def clip(model: nn.Module):\n"
        "    for p in model.parameters():\n"
        "        p.clamp(-1, 1)\n"
        "    for i, q in enumerate(model.parameters()):\n"
        "        q.clamp(-1, 1)\n"
    )
    kept, found = _same(engine, source)
    assert "GF209" in kept and [(f.rule, f.span.line) for f in found] == [("GF209", 6)]
    # a tuple target is unknown to the flow: alone, it does not make the rule run
    alone = source.replace("    for p in model.parameters():\n        p.clamp(-1, 1)\n", "")
    kept, found = _same(engine, alone)
    assert "GF209" not in kept and found == []


# -- GF101: a call given a literal True runs in place only for an activation or dropout ----------

def test_gf101_true_argument_counts_only_for_an_inplace_callee(engine):
    source = (
        "import json\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n"
        "        self.act = {ctor}\n\n"
        "    def forward(self, x):\n"
        "        h = self.fc(x).sigmoid()\n"
        "        json.dumps({{}}, sort_keys=True)\n"
        "        return {call}\n"
    )
    plain = source.format(ctor="nn.Tanh()", call="self.act(h)")
    kept, found = _same(engine, plain)
    assert "GF101" not in kept and found == []          # `sort_keys=True` is no in-place op
    for ctor, call in [("nn.Tanh()", "F.relu(h, inplace=True)"), ("nn.ReLU(True)", "self.act(h)"),
                       ("Act(inplace=True)", "self.act(h)")]:
        text = source.format(ctor=ctor, call=call).replace("import json\n", "import json\nfrom torch.nn import ReLU as Act\n")
        kept, found = _same(engine, text)
        assert "GF101" in kept and "GF101" in [f.rule for f in found], (ctor, call)


# -- GF102: a detached copy mutated in a scope that may hold a value requiring grad ---------------

GF102_CASE = (
    "import torch.nn as nn\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n"
    "        h = self.fc(x)\n"
    "        d = h.detach()\n"
    "        {mutation}\n"
    "        return h.sigmoid(), d\n\n\n"
    "def summary(t):\n"
    "    c = t.detach()\n"
    "    c += 1\n"
    "    return c\n"
)


def test_gf102_needs_detach_and_an_inplace_op_in_one_grad_scope(engine):
    kept, found = _same(engine, GF102_CASE.format(mutation="d += 1"))
    assert "GF102" in kept and [(f.rule, f.span.line) for f in found if f.rule == "GF102"] == [("GF102", 11)]
    # the in-place op and the detach are in `summary`, which nothing that may hold a grad value calls
    kept, found = _same(engine, GF102_CASE.format(mutation="pass"))
    assert "GF102" not in kept and found == []


# -- GF304: a container of module constructors, or an empty one filled later ----------------------

GF304_CASE = (
    "import torch.nn as nn\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.blocks = {value}\n"
    "        {fill}\n"
)


@pytest.mark.parametrize("value,fill", [("['a', 'b']", "pass"), ("{}", "pass"), ("[nn.Linear(2, 2), 3]", "pass"),
                                        ("{'a': 1}", "pass"), ("[*blocks]", "pass")])
def test_gf304_skips_containers_that_cannot_hold_module_constructors(engine, value, fill):
    kept, found = _same(engine, GF304_CASE.format(value=value, fill=fill))
    assert "GF304" not in kept and found == []


@pytest.mark.parametrize("value,fill", [("[nn.Linear(2, 2), nn.Linear(2, 2)]", "pass"),
                                        ("{'a': nn.Linear(2, 2)}", "pass"),
                                        ("[nn.Linear(2, 2) for _ in range(3)]", "pass"),
                                        ("[]", "self.blocks.append(nn.Linear(2, 2))"),
                                        ("{}", "self.blocks['a'] = nn.Linear(2, 2)")])
def test_gf304_keeps_containers_of_modules(engine, value, fill):
    kept, found = _same(engine, GF304_CASE.format(value=value, fill=fill))
    assert "GF304" in kept and [f.rule for f in found] == ["GF304"]


def test_gf101_module_built_in_place_by_a_parallel_assignment_elsewhere(engine):
    # the module is bound at module level, each name of the parallel assignment alone (`_parallel_pairs`);
    # the function calling it has no in-place op of its own
    source = (
        "import torch\nimport torch.nn as nn\n\n"
        "ACT, N = nn.ReLU(True), 3\n\n\n"
        "def head(x, w):\n"
        "    h = torch.sigmoid(x @ w)\n"
        "    return ACT(h)\n\n\n"
        "def main():\n"
        "    return head(torch.ones(2, 2), nn.Parameter(torch.ones(2, 2)))\n"
    )
    kept, found = _same(engine, source)
    assert "GF101" in kept and [(f.rule, f.span.line) for f in found] == [("GF101", 9)]
