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


@pytest.mark.parametrize("value", ["set()", "[]", "{}", "'name'", "(1, 2)", "len(x) > 2", "sorted(x)", "x.shape",
                                   "x.device", "torch.float32", "x.grad_fn"])
def test_gf209_skips_a_name_bound_only_to_a_value_that_is_never_a_tensor(engine, value):
    kept, found = _same(engine, GF209_CASE.format(imports="", value=value))
    assert "GF209" not in kept and found == []


@pytest.mark.parametrize("value", ["torch.zeros(3)", "x", "x[0]", "x.T", "-x", "x * 2", "x.data", "x.grad",
                                   "x[0].mT"])
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


GF209_PARAM_CASE = (
    "import typing\nimport numpy as np\nimport torch\nimport torch.nn as nn\n{imports}\n\n"
    "def step(x: {ann}, k: int = 1):\n"
    "    x.{call}\n"
    "    return x\n\n\n"
    "step(torch.ones(2))\n"
)


@pytest.mark.parametrize("imports,ann", [("", "nn.Module"), ("", "torch.nn.Module"), ("", "dict"), ("", "np.ndarray"),
                                         ("", "torch.Size"), ("", "int"), ("from torch import Tensor as T", "Tensor2"),
                                         ("from torch import Tensor", "nn.Tensorish")])
@pytest.mark.parametrize("call", ["add(1)", "float()", "clamp(0, 1)"])
def test_gf209_skips_a_parameter_whose_dotted_annotation_is_not_a_tensor(engine, imports, ann, call):
    # the parameter's binding has that annotation's kind and ctor: not TENSORISH, and `_passed_tensor` wants
    # no ctor, though the call site passes a tensor
    kept, found = _same(engine, GF209_PARAM_CASE.format(imports=imports, ann=ann, call=call))
    assert "GF209" not in kept and found == []


@pytest.mark.parametrize("imports,ann", [("", "torch.Tensor"), ("", "torch.FloatTensor"),
                                         ("from torch import Tensor", "Tensor"),
                                         ("from torch import Tensor as T", "T"), ("import torch as th", "th.Tensor"),
                                         ("", "'torch.Tensor'"), ("", "typing.Optional[torch.Tensor]"),
                                         ("", "torch.Tensor | None")])
@pytest.mark.parametrize("call", ["add(1)", "float()"])
def test_gf209_keeps_a_parameter_annotated_as_a_tensor_or_not_by_a_dotted_name(engine, imports, ann, call):
    # a Tensor name is Kind.TENSOR; an annotation that is no dotted name leaves the kind unknown and no ctor,
    # so the call site passing `torch.ones(2)` shows it a tensor (`_passed_tensor`)
    kept, found = _same(engine, GF209_PARAM_CASE.format(imports=imports, ann=ann, call=call))
    assert "GF209" in kept and [f.rule for f in found] == ["GF209"]


def test_gf209_annotation_other_than_tensor_with_the_name_rebound_to_a_tensor(engine):
    source = GF209_PARAM_CASE.format(imports="", ann="dict", call="add(1)").replace(
        "    x.add(1)\n", "    x = torch.zeros(3)\n    x.add(1)\n")
    kept, found = _same(engine, source)
    assert "GF209" in kept and [f.rule for f in found] == ["GF209"]


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


# -- GF101: the written name must be one the scope may bind to a tensor ----------------------------

GF101_WRITE_CASE = (
    "import torch\nimport torch.nn as nn\n\n\n"
    "class Gate(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.lin = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n"
    "        g = torch.sigmoid(self.lin(x))\n"
    "        box = {value}\n"
    "        {write}\n"
    "        return g * 2, box\n"
)


@pytest.mark.parametrize("value,write", [("{}", "box['k'] = 1.0"), ("[0.0, 0.0]", "box[0] = 1.0"),
                                         ("dict()", "box['k'] = 1.0"), ("()", "box += (1.0,)"),
                                         ("[]", "box.clamp_(0, 1)"), ("{}", "other[0] = 1.0"),
                                         ("self.lin", "box[0] = 1.0"), ("g.shape", "box += 1"),
                                         ("self.lin.weight", "box.mul_(2)")])
def test_gf101_skips_writes_into_names_never_bound_to_a_tensor(engine, value, write):
    # a display, a builtin's result, an attribute other than a view or `.grad` (UNKNOWN to `classify`), or a
    # name the scope never binds: `Flow.alias_root` finds no tensor binding
    kept, found = _same(engine, GF101_WRITE_CASE.format(value=value, write=write))
    assert "GF101" not in kept and found == []


@pytest.mark.parametrize("value,write", [("g", "box[0] = 1.0"), ("g.view(-1)", "box[0] = 1.0"),
                                         ("g", "box += 1"), ("g", "box.mul_(2)"), ("g.data", "box.mul_(2)"),
                                         ("g.T", "box[0] = 1.0")])
def test_gf101_keeps_writes_into_a_tensor_the_activation_saved(engine, value, write):
    kept, found = _same(engine, GF101_WRITE_CASE.format(value=value, write=write))
    assert "GF101" in kept and [(f.rule, f.span.line) for f in found] == [("GF101", 13)]


@pytest.mark.parametrize("value,write", [("{}", "x[0] = 1.0"), ("{}", "g.data[0] = 1.0")])
def test_gf101_keeps_parameters_roots_and_chains_from_a_saved_tensor(engine, value, write):
    # `x`, the forward's input, was saved by the Linear; `g.data` shares the sigmoid's saved output
    kept, _found = _same(engine, GF101_WRITE_CASE.format(value=value, write=write))
    assert "GF101" in kept


@pytest.mark.parametrize("write", ["for box in torch.unbind(g):\n            box[0] = 1.0",
                                   "for box in g.float():\n            box[0] = 1.0",
                                   "for _, box in self.named_parameters():\n            box += 1",
                                   "if (box := g) is not None:\n            box[0] = 1.0"])
def test_gf101_skips_names_bound_another_way_with_nothing_saved(engine, write):
    # a loop over a call, a walrus target: the flow may find a tensor there, but the binding written into is
    # no op's saved input or output, shares no storage and is no leaf (analysis/inplace_hazards.py)
    kept, found = _same(engine, GF101_WRITE_CASE.format(value="{}", write=write))
    assert "GF101" not in kept and found == []


@pytest.mark.parametrize("write", ["for box in [g]:\n            box[0] = 1.0",
                                   "for box in g:\n            box[0] = 1.0",
                                   "for box in zip([g], [g]):\n            box[0] = 1.0",
                                   "for _, box in enumerate([g]):\n            box += 1",
                                   "for box in range(3):\n            box += 1",
                                   "with torch.no_grad() as box:\n            box += 1",
                                   "with open('f') as (box, other):\n            box[0] = 1.0"])
def test_gf101_skips_loop_and_with_targets_no_leaf_can_bind(engine, write):
    # a `for` target is PARAMETER, NUMBER or UNKNOWN to the flow, a `with` target OTHER or UNKNOWN with no
    # value: only `_leaf_inplace` could report on it, and that needs the loop's iterable to be a call that
    # makes a leaf (a builtin's call is not, when the file does not rebind the builtin)
    kept, found = _same(engine, GF101_WRITE_CASE.format(value="{}", write=write))
    assert "GF101" not in kept and found == []


GF101_LEAF_LOOP = (
    "import torch\n{imports}\n\n\n"
    "def train(x):\n"
    "    for w in {iterable}:\n"
    "        w -= 0.1 * w.grad\n"
    "    return x\n"
)


@pytest.mark.parametrize("imports,iterable,fires", [
    ("", "torch.zeros(2, 3, requires_grad=True)", True),
    ("from torch import zeros as zip", "zip(2, 3, requires_grad=True)", True),
    ("", "zip([torch.zeros(2, requires_grad=True)])", False)])
def test_gf101_loop_over_a_call_that_may_make_a_leaf(engine, imports, iterable, fires):
    # `for w in torch.zeros(..., requires_grad=True)`: the target's binding has the factory call for value, a
    # leaf to `leaves.leaf_ctor`; a builtin's call counts only when an import rebinds the name
    kept, found = _same(engine, GF101_LEAF_LOOP.format(imports=imports, iterable=iterable))
    assert ("GF101" in kept) is fires
    assert [(f.rule, f.span.line) for f in found] == ([("GF101", 7)] if fires else [])


GF101_MODE_CASE = (
    "import torch\nimport torch.nn as nn\n{imports}\n\n\n"
    "class Gate(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.lin = nn.Linear(4, 4)\n\n"
    "    {decorator}\n"
    "    def {name}(self, x):\n"
    "        g = torch.sigmoid(self.lin(x))\n"
    "        g += 1\n"
    "        return g\n"
)


@pytest.mark.parametrize("imports,decorator,name", [
    ("", "@torch.no_grad()", "forward"), ("", "@torch.inference_mode()", "forward"),
    ("", "@torch.autograd.no_grad()", "forward"), ("from torch import no_grad", "@no_grad()", "forward"),
    ("from torch import inference_mode as frozen", "@frozen()", "forward"), ("", "@torch.no_grad", "forward"),
    ("", "", "reset_parameters"), ("", "", "_init_weights"), ("", "@staticmethod", "initialize")])
def test_gf101_skips_functions_it_never_looks_at(engine, imports, decorator, name):
    # FileIndex.training_code_flows leaves out initialisers and functions decorated with a no_grad context
    kept, found = _same(engine, GF101_MODE_CASE.format(imports=imports, decorator=decorator, name=name))
    assert "GF101" not in kept and found == []


@pytest.mark.parametrize("imports,decorator", [
    ("", ""), ("", "@torch.enable_grad()"), ("from helpers import no_grad", "@no_grad()"),
    ("from torch import no_grad\nfrom helpers import no_grad", "@no_grad()"),
    ("import helpers as torch", "@torch.no_grad()")])
def test_gf101_keeps_functions_not_shown_no_grad(engine, imports, decorator):
    # a decorator that is not surely torch's no_grad (another module's, or a name two imports bind): kept
    kept, found = _same(engine, GF101_MODE_CASE.format(imports=imports, decorator=decorator, name="forward"))
    assert "GF101" in kept
    if "as torch" not in imports:       # (there `torch.sigmoid` is no torch call either)
        assert [(f.rule, f.span.line) for f in found] == [("GF101", 14 + imports.count("\n"))]


# -- GF304: a module built and called at once needs a call of a call in `forward` -------------------

GF304_FORWARD_CASE = (
    "import torch.nn as nn\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.lin = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n"
    "        return {body}\n"
)


@pytest.mark.parametrize("body,fires", [("nn.Linear(4, 4)(x)", True), ("nn.Linear(4, 4).to(x.device)(x)", True),
                                        ("(nn.Conv1d(4, 4, 1))(x)", True),
                                        ("nn.utils.weight_norm(nn.Conv1d(4, 4, 1))(x)", True),
                                        ("nn.ReLU()(x)", False), ("self.make()(x)", False),
                                        ("getattr(self, 'lin')(x)", False),
                                        ("self.lin(x)", False), ("nn.functional.relu(self.lin(x))", False)])
def test_gf304_forward_clause_needs_a_call_of_a_call(engine, body, fires):
    # the inner call must be one `ctor_of` may take to a torch module with parameters (by last names)
    kept, found = _same(engine, GF304_FORWARD_CASE.format(body=body))
    assert ("GF304" in kept) == fires
    assert [f.rule for f in found if f.rule == "GF304"] == (["GF304"] if fires else [])


def test_gf304_forward_clause_reads_import_aliases(engine):
    source = ("from torch.nn import Linear as Dense, Module\n\n\n"
              "class Net(Module):\n"
              "    def forward(self, x):\n"
              "        return Dense(4, 4)(x)\n")
    kept, found = _same(engine, source)
    assert "GF304" in kept and [f.rule for f in found] == ["GF304"]


# -- GF305: a forward call on another object ------------------------------------------------------

GF305_CASE = (
    "import torch.nn as nn\n\n\n"
    "class Base(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x\n\n\n"
    "class Net(Base):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.lin = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n"
    "        return {call}\n"
)


@pytest.mark.parametrize("call,fires", [("self.lin.forward(x)", True), ("super().forward(x)", False),
                                        ("Base.forward(self, x)", False), ("self.forward(x)", False),
                                        ("self.lin(x).forward(x)", False)])
def test_gf305_needs_a_forward_call_on_another_dotted_name(engine, call, fires):
    kept, found = _same(engine, GF305_CASE.format(call=call))
    assert ("GF305" in kept) == fires
    assert [f.rule for f in found if f.rule == "GF305"] == (["GF305"] if fires else [])


# -- GF302: a literal requires_grad=True ------------------------------------------------------------

GF302_CASE = (
    "import torch\n\n\n"
    "def fit(x, device):\n"
    "    w = {value}\n"
    "    opt = torch.optim.SGD([w], lr=0.1)\n"
    "    return opt, x\n"
)


@pytest.mark.parametrize("value,fires", [("torch.randn(3, requires_grad=True).to(device)", True),
                                         ("torch.randn(3).requires_grad_().to(device)", True),
                                         ("torch.randn(3, requires_grad=False).to(device)", False),
                                         ("torch.randn(3).requires_grad_(False).to(device)", False)])
def test_gf302_needs_a_literal_true_request(engine, value, fires):
    kept, found = _same(engine, GF302_CASE.format(value=value))
    assert ("GF302" in kept) == fires
    assert [f.rule for f in found if f.rule == "GF302"] == (["GF302"] if fires else [])


def test_gf302_flag_set_true_by_assignment_is_kept(engine):
    source = ("import torch\n\n\n"
              "def fit(x, device):\n"
              "    w = torch.randn(3)\n"
              "    w.requires_grad = True\n"
              "    w = w.to(device)\n"
              "    opt = torch.optim.SGD([w], lr=0.1)\n"
              "    return opt, x\n")
    kept, found = _same(engine, source)
    assert "GF302" in kept and [f.rule for f in found if f.rule == "GF302"] == ["GF302"]
