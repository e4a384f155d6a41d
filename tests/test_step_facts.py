"""Shared facts added for issue 11: every optimizer one backward's update steps (analysis/trainstep.py
`optimizer_names`, read by GF307's trained modules), leaves that require grad (analysis/leaves.py, GF101)
and torch tensors used as slot accumulators (analysis/expressions.py, GF208)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import FileIndex
from gradfix.analysis.gradpath import GradPaths
from gradfix.analysis.loops import training_loops
from gradfix.analysis.trainstep import optimizer_names


def index_of(src: str) -> FileIndex:
    return FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True), src)


TWO_STEPS = '''
import torch
import torch.nn as nn

a, b, c = nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)
opt_a = torch.optim.SGD(a.parameters(), lr=0.1)
opt_b = torch.optim.SGD(b.parameters(), lr=0.1)
opt_c = torch.optim.SGD(c.parameters(), lr=0.1)
for x in data:
    loss = a(x).sum() + b(x).sum()
    loss.backward()
    opt_a.step()
    opt_b.step()
    other = c(x).sum()
    other.backward()
    opt_c.step()
    opt_a.step()
'''


def _loops(src):
    return [tl for _scope, _flow, tl in training_loops(index_of(src))]


def test_every_optimizer_stepped_before_the_next_backward():
    first, second = _loops(TWO_STEPS)
    assert optimizer_names(first) == ["opt_a", "opt_b"]  # opt_c's step belongs to the next backward
    assert optimizer_names(second) == ["opt_c", "opt_a"]


def test_trained_modules_are_those_of_every_stepped_optimizer():
    first, second = _loops(TWO_STEPS)
    assert GradPaths(first).trained == {"a", "b"}
    assert GradPaths(second).trained == {"c", "a"}


def test_no_step_no_optimizers():
    (only,) = _loops("import torch\nfor x in data:\n    loss = model(x).sum()\n    loss.backward()\n")
    assert optimizer_names(only) == []


# --- leaves that require grad (analysis/leaves.py, read by GF101) ---------------------------------

from gradfix.analysis.leaves import leaf_at  # noqa: E402

LEAVES = '''
import torch
import torch.nn as nn

a = torch.randn(3, requires_grad=True)
b = torch.zeros(3)
b.requires_grad_()
c = nn.Parameter(torch.ones(3))
d = torch.randn(3, requires_grad=True).double()
e = torch.randn(3, requires_grad=True)
e.requires_grad_(False)
f = nn.Parameter(torch.ones(3), requires_grad=False)
g = torch.zeros(3)
if flag:
    g.requires_grad_()
h = torch.randn(3, requires_grad=True)
for i in range(3):
    h += 1
    h = h * 2
k = torch.randn(3, requires_grad=True)
for i in range(3):
    k += 1
    k = torch.randn(3, requires_grad=True)
a += 1; b += 1; c += 1; d += 1; e += 1; f += 1; g += 1
'''


def _leaf_facts(src):
    index = index_of(src)
    flow = index.flow(index.module)
    last = {}
    for st in flow.steps:
        node = st.node
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            last[node.target.value] = leaf_at(flow, node.target.value, st.index)
    return last


def test_leaf_facts_shown_only_when_every_path_makes_one():
    facts = _leaf_facts(LEAVES)
    assert facts["a"] == "created with requires_grad=True"
    assert facts["b"] == "given requires_grad by `.requires_grad_()`"
    assert facts["c"] == "an nn.Parameter"
    assert facts["k"] == "created with requires_grad=True"   # rebound to a fresh leaf each pass
    for name in ("d", "e", "f", "g", "h"):
        # a copy; turned off; a parameter without grad; turned on only in a branch; a non-leaf next pass
        assert facts[name] is None, name


def test_float_after_a_float32_factory_is_the_leaf_itself():
    src = "import torch\nw = torch.tensor(1.0, requires_grad=True).float()\nw += 1\n"
    assert _leaf_facts(src)["w"] == "created with requires_grad=True"
    # with the default dtype changed, `.float()` copies a float64 tensor: no leaf shown
    assert _leaf_facts("import torch\ntorch.set_default_dtype(torch.float64)\n" + src.split("\n", 1)[1])["w"] is None


# --- a slot of a torch tensor as an accumulator (analysis/expressions.py, read by GF208) -----------

from gradfix.analysis.expressions import tensor_slot_total  # noqa: E402

SLOTS = '''
import numpy as np
import torch

t = torch.zeros(3)
a = np.zeros(3)
r = torch.zeros(3, requires_grad=True)
l = [0.0, 0.0, 0.0]
t[0] += loss
a[0] += loss
r[0] += loss
l[0] += loss
u[0] += loss
'''


def test_tensor_slot_totals_are_fresh_torch_tensors_only():
    index = index_of(SLOTS)
    flow = index.flow(index.module)
    got = {st.node.target.value.value: tensor_slot_total(flow, st.node) for st in flow.steps
           if isinstance(st.node, cst.AugAssign)}
    assert got == {"t": True, "a": False, "r": False, "l": False, "u": False}


# --- a forward that clears its own gradients, in another file (analysis/returns.py, project.py; GF205) --

import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402

from gradfix.codemods import ALL_RULES  # noqa: E402
from gradfix.config import Config  # noqa: E402
from gradfix.engine import Engine  # noqa: E402
from gradfix.runner import lint_paths  # noqa: E402

TAGGER = '''
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        self.zero_grad()
        return self.fc(x).sum()


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x).sum()
'''

LOOP = '''
import torch
{imports}

model = {cls}()
optim = torch.optim.Adam(model.parameters())
for x in batches:
    loss = model(x)
    loss.backward()
    optim.step()
'''


def _gf205(tmp_path, monkeypatch, imports, cls):
    (tmp_path / "tagger.py").write_text(TAGGER)
    (tmp_path / "train.py").write_text(textwrap.dedent(LOOP.format(imports=imports, cls=cls)))
    monkeypatch.chdir(tmp_path)
    config = Config(root=str(tmp_path))
    report = lint_paths(Engine([r for r in ALL_RULES if r.id == "GF205"], config), ["."], config)
    return [(Path(lint.path).name, f.span.line) for lint in report.lints for f in lint.findings]


def test_forward_clearing_class_of_another_file_silences_gf205(tmp_path, monkeypatch):
    assert _gf205(tmp_path, monkeypatch, "from tagger import Tagger", "Tagger") == []
    assert _gf205(tmp_path, monkeypatch, "from tagger import *", "Tagger") == []       # through a star import
    assert _gf205(tmp_path, monkeypatch, "from tagger import Plain", "Plain") == [("train.py", 9)]
    assert _gf205(tmp_path, monkeypatch, "from tagger import *", "Plain") == [("train.py", 9)]


# --- a loss helper inherited from a base class of another file clears the gradients (project.py; GF205) --

BASE_TRAINER = '''
import torch


class Trainer(object):
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def standard_loss(self, x, y):
        self.optimizer.zero_grad()
        return ((self.model(x) - y) ** 2).mean()

    def plain_loss(self, x, y):
        return ((self.model(x) - y) ** 2).mean()
'''

SUBCLASS = '''
from core.train import Trainer


class Middle(Trainer):
    pass


class EmaTrainer(Middle):
    def train(self, loader):
        for x, y in loader:
            loss = self.{helper}(x, y)
            loss.backward()
            self.optimizer.step()
'''


def _inherited(tmp_path, monkeypatch, helper):
    (tmp_path / "core").mkdir(exist_ok=True)
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "train.py").write_text(BASE_TRAINER)
    (tmp_path / "ema.py").write_text(SUBCLASS.format(helper=helper))
    monkeypatch.chdir(tmp_path)
    config = Config(root=str(tmp_path))
    report = lint_paths(Engine([r for r in ALL_RULES if r.id == "GF205"], config), ["."], config)
    return [(Path(lint.path).name, f.span.line) for lint in report.lints for f in lint.findings]


def test_inherited_clearing_method_of_another_file_silences_gf205(tmp_path, monkeypatch):
    assert _inherited(tmp_path, monkeypatch, "standard_loss") == []      # through two classes, two files
    assert _inherited(tmp_path, monkeypatch, "plain_loss") == [("ema.py", 13)]


def test_summary_records_the_methods_that_clear():
    import ast

    from gradfix.analysis.returns import clearing_methods

    assert clearing_methods(ast.parse(BASE_TRAINER)) == {"Trainer.standard_loss"}


def _loss_sources(src):
    from gradfix.analysis.expressions import code_of
    from gradfix.analysis.trainstep import loss_expressions

    return [[code_of(v) for _stmt, v in loss_expressions(tl)] for tl in _loops(src)]


REBOUND = '''
import torch
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for t in range(3):
    loss = (w * x - y).pow(2).sum().item()
for t in range(3):
    loss = crit(model(x), y)
    if t % 2:
        loss = loss * 0.5
    loss.backward()
    opt.step()
'''


def test_a_binding_rebound_on_every_path_before_backward_is_not_followed():
    """An earlier loop's `loss` (a notebook's previous cell) never reaches a backward whose loop binds `loss`
    again first; a rebinding in a branch, or one that reads the name, keeps the earlier binding."""
    assert _loss_sources(REBOUND) == [["loss", "loss * 0.5", "crit(model(x), y)", "torch.nn.Linear(3, 1)"]]
    branchy = REBOUND.replace("    loss = crit(model(x), y)\n", "    if t:\n        loss = crit(model(x), y)\n")
    assert "(w * x - y).pow(2).sum().item()" in _loss_sources(branchy)[0]


def test_a_binding_in_a_try_statement_does_not_hide_the_earlier_one():
    """A `try` body may raise before its binding, and a handler runs only then: neither stops the walk."""
    src = REBOUND.replace("    loss = crit(model(x), y)\n",
                          "    try:\n        loss = crit(model(x), y)\n    except RuntimeError:\n        pass\n")
    assert "(w * x - y).pow(2).sum().item()" in _loss_sources(src)[0]
    inside = REBOUND.replace("    loss = crit(model(x), y)\n    if t % 2:\n        loss = loss * 0.5\n"
                             "    loss.backward()\n",
                             "    try:\n        loss = crit(model(x), y)\n        loss.backward()\n"
                             "    except RuntimeError:\n        pass\n")
    assert _loss_sources(inside) == [["loss", "crit(model(x), y)", "torch.nn.Linear(3, 1)"]]


WARMUP = '''
import torch
class Learner:
    def warm_up(self, loader):
        self.optimizer = torch.optim.SGD(self.model.heads[-1].parameters(), lr=0.1)
        for x, y in loader:
            loss = crit(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
'''


def test_optimized_parts_names_the_submodule_the_optimizer_holds():
    from gradfix.analysis.gradpath import optimized_parts

    assert [optimized_parts(tl) for tl in _loops(WARMUP)] == [{"self.model.heads[-1]"}]
    groups = WARMUP.replace("self.model.heads[-1].parameters()", "[{'params': self.model.parameters()}]")
    assert [optimized_parts(tl) for tl in _loops(groups)] == [None]


PENALTY = '''
import torch
def critic_step(gen: torch.nn.Module, critic: torch.nn.Module, opt, real, z):
    fake = gen(z).detach()
    gp = penalty(critic, real, fake)
    smooth = roughness(fake)
    loss = critic(fake).mean() - critic(real).mean() + 10 * gp + smooth
    loss.backward()
    opt.step()
'''


def test_a_term_from_a_call_handed_a_trained_module_is_not_dead():
    from gradfix.analysis.expressions import code_of

    (tl,) = _loops(PENALTY)
    paths = GradPaths(tl)
    dead = [code_of(t) for t in paths.additive_terms() if paths.dead_term(t)]
    assert dead == ["roughness(fake)"]   # `penalty(critic, ...)` may run the critic; `roughness(fake)` cannot
