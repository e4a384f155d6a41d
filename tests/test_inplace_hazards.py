"""GF101's sharper pre-pass test (analysis/inplace_hazards.py): for each way the rule can show a hazard, a case
the rule reports, which the test must keep, and the shapes of library code (an in-place op on a tensor nothing
saved and nothing else holds) that it must drop. Each case is also run with and without the pre-pass, and the
findings compared (`_same`)."""

from __future__ import annotations

import ast

import pytest

from gradfix.analysis import astindex, gradscopes
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine

from test_prescan_equivalence import _same

HEAD = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
    "class Block(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.lin = nn.Linear(4, 4)\n"
    "        self.act = nn.ReLU()\n"
    "        self.drop = nn.Dropout(0.1)\n"
    "        self.flag = True\n\n"
    "    def forward(self, x, outs):\n"
)


def _block(body: str) -> str:
    return HEAD + "".join(f"        {line}\n" for line in body.splitlines())


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


# (body of Block.forward, the line GF101 reports): each needs one clause of the test
SHOWN = [
    # the Linear saved its input `x` (a module call's first argument)
    ("h = self.lin(x)\nx += 1\nreturn h", 16),
    # the ReLU saved its output (a submodule the class builds from an output-saving module)
    ("h = self.act(self.lin(x))\nh += 1\nreturn h", 16),
    # a product saved both sides (`h * h`), and `sigmoid` its output through a function call
    ("h = self.lin(x)\ny = h * h\nh.mul_(2)\nreturn y", 17),
    ("h = torch.sigmoid(self.lin(x))\nh /= 2\nreturn h", 16),
    # another live name shares the storage (a view read after the op)
    ("h = self.lin(x)\nv = h.view(-1)\nh += 1\nreturn v", 17),
    # the storage escaped into a container before the op
    ("h = self.lin(x)\nouts.append(h)\nh += 1\nreturn h", 17),
    # a binding that reaches the op when a configuration `if` rebinding the name does not run
    ("out = self.act(self.lin(x))\nif self.flag:\n    out = self.drop(out)\nout += x\nreturn out", 18),
    # one of several views of a tensor that requires grad
    ("mean, log_std = self.lin(x).chunk(2, dim=-1)\nlog_std.clamp_(-20, 2)\nreturn mean, log_std", 16),
]


@pytest.mark.parametrize("body,line", SHOWN)
def test_hazards_gf101_shows_are_kept(engine, body, line):
    kept, found = _same(engine, _block(body))
    assert "GF101" in kept
    assert [(f.rule, f.span.line) for f in found if f.rule == "GF101"] == [("GF101", line)]


DROPPED = [
    # the residual add of a library block: the written tensor is the dropout's fresh output
    "h = self.lin(x)\nh = self.drop(h)\nh += x\nreturn h",
    # rebound from a view chain, then written: no other binding of the storage is read after the op
    "h = self.lin(x)\nh = h.view(-1)\nh += 1\nreturn h",
    # under no_grad
    "h = self.act(self.lin(x))\nwith torch.no_grad():\n    h += 1\nreturn h",
    # the earlier binding was saved only inside the `if` whose skipping would bring it to the op
    "h = x + 1\nif self.flag:\n    h = self.lin(h)\nh += 1\nreturn h",
    # a division by a number saves nothing of `h`
    "h = self.drop(x)\ny = h / 2\nh += 1\nreturn y",
    # a norm of a value that is no tensor (an attribute other than a view) saves nothing autograd holds
    "s = self.flag\nt = s.view(-1)\ny = torch.norm(s) * self.lin(x)\nt += 1\nreturn y",
    # a loop over the model's layers: the layer's result is no saved output the rule can show
    "h = x\nfor layer in outs:\n    h = layer(h)\nh += 1\nreturn h",
]


@pytest.mark.parametrize("body", DROPPED)
def test_hazards_library_shapes_are_dropped(engine, body):
    kept, found = _same(engine, _block(body))
    assert "GF101" not in kept and [f for f in found if f.rule == "GF101"] == []


CALL_SITE = (
    "import torch\nimport torch.nn as nn\n\n\n"
    "def normalise(images):\n"
    "    images.div_(255)\n"
    "    return images\n\n\n"
    "def run(x):\n"
    "    net = nn.Linear(2, 2)\n"
    "    y = {value}\n"
    "    return normalise(y)\n"
)


@pytest.mark.parametrize("value,shown", [("torch.tanh(net(x))", True), ("net(x) + 1", False)])
def test_hazards_a_parameter_written_in_a_helper_needs_a_saved_tensor_at_a_call(engine, value, shown):
    # `_saved_at_a_call_site`: the tanh's saved output handed to the helper; a sum saves nothing
    kept, found = _same(engine, CALL_SITE.format(value=value))
    assert ("GF101" in kept) == shown
    assert [(f.rule, f.span.line) for f in found if f.rule == "GF101"] == ([("GF101", 6)] if shown else [])


@pytest.mark.parametrize("made,line", [("w = torch.zeros(3, requires_grad=True)", 6),
                                       ("w = torch.zeros(3)\n    w.requires_grad_()", 7),
                                       ("w = torch.zeros(3)\n    w.requires_grad = True", 7),
                                       ("w = nn.Parameter(torch.zeros(3))", 6)])
def test_hazards_a_leaf_that_requires_grad_is_kept(engine, made, line):
    # `_leaf_inplace`: the name is bound to a leaf constructor, or made to require grad by a statement
    source = ("import torch\nimport torch.nn as nn\n\n"
              "def fit(x):\n"
              f"    {made}\n"
              "    w -= 0.1 * x\n"
              "    return w\n")
    kept, found = _same(engine, source)
    assert "GF101" in kept and [(f.rule, f.span.line) for f in found] == [("GF101", line)]


def test_hazards_a_leaf_elsewhere_in_the_scope_does_not_keep_another_name(engine):
    source = ("import torch\nimport torch.nn as nn\n\n"
              "def fit(x, net):\n"
              "    w = torch.zeros(3, requires_grad=True)\n"
              "    h = net(x) + 1\n"
              "    h -= 0.1\n"
              "    return w, h\n")
    kept, found = _same(engine, source)
    assert "GF101" not in kept and found == []


def test_hazards_class_table_cycle_answers_every_attribute():
    # a class whose attribute is built from the class itself: while its table is built, any attribute may be
    # an output-saving module (an over-approximation: the test never drops on a partial table)
    tree = ast.parse("import torch.nn as nn\n\n\n"
                     "class A(nn.Module):\n"
                     "    def __init__(self):\n"
                     "        super().__init__()\n"
                     "        self.inner = A()\n\n"
                     "    def forward(self, x):\n"
                     "        return self.inner(x)\n")
    scopes = gradscopes.scan(tree, frozenset({"Parameter"}), False)
    facts = scopes[0].facts
    assert facts is not None and facts.class_returns_saved("A") is True
    assert "inner" in facts.class_attrs("A")[0]
    assert astindex.of(tree) is facts.ix


def test_hazards_a_function_named_requires_grad_is_no_leaf_request(engine):
    # `requires_grad_(model, False)`, a project helper: a call of a name, not a tensor's method
    source = ("import torch\n\n\n"
              "def requires_grad_(model, flag):\n"
              "    for p in model.parameters():\n"
              "        p.requires_grad = flag\n\n\n"
              "def fit(net, x):\n"
              "    requires_grad_(net, False)\n"
              "    h = net(x) + 1\n"
              "    h -= 0.1\n"
              "    return h\n")
    kept, found = _same(engine, source)
    assert [f for f in found if f.rule == "GF101"] == []


def test_hazards_a_deep_expression_is_decided_without_recursion_errors(engine):
    terms = " + ".join(["x"] * 300)   # deeper than the tests' depth limit, within what libcst parses
    source = f"import torch\n\n\ndef f(x, net):\n    y = net(x)\n    z = {terms}\n    z += y\n    return z\n"
    kept, found = _same(engine, source)
    assert found == []


def test_a_condition_that_raises_keeps_its_rule(monkeypatch):
    # the pre-pass may only skip work: a condition that cannot decide keeps the rule, and the run goes on
    from gradfix.analysis import prepass

    eng = Engine(ALL_RULES)
    rule = next(r for r in eng.rules if r.id == "GF101")

    def broken(facts):
        raise AttributeError("a bug in a condition")

    monkeypatch.setattr(rule, "may_match", broken)
    source = "x = 1\n"
    kept = [r.id for r in prepass.rules_for(eng.rules, ast.parse(source), source, "c.py")]
    assert "GF101" in kept
    findings, errors = eng.lint_source(source, "c.py")
    assert findings == [] and errors == []


# sources a review found the replay dropping while the rule reports (each fixed in inplace_hazards.py)
REVIEWED = [
    # a starred argument of a binary-saving method (`h.mul(*ys)`)
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '\n'
        '    def forward(self, x):\n'
        '        h = self.fc(x)\n'
        '        ys = h.chunk(1)\n'
        '        z = h.mul(*ys)\n'
        '        h += 1\n'
        '        return z + h\n'
    ),
    # a loop target over parameters() keeps its grad under no_grad
    (
        'import torch\n'
        '\n'
        'model = torch.nn.Linear(2, 2)\n'
        'with torch.no_grad():\n'
        '    for p in model.parameters():\n'
        '        pass\n'
        'z = torch.zeros(2)\n'
        'q = torch.sigmoid(p + z)\n'
        'q += 1\n'
        'q.sum().backward()\n'
    ),
    # a `while`'s `else` is not walked by the flow
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '\n'
        '    def forward(self, x):\n'
        '        h = torch.sigmoid(self.fc(x))\n'
        '        while x is None:\n'
        '            pass\n'
        '        else:\n'
        '            h = torch.zeros(3)\n'
        '        h += 1\n'
        '        return h\n'
    ),
    # an `except*` statement's body is not walked by the flow
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '\n'
        '    def forward(self, x):\n'
        '        h = torch.sigmoid(self.fc(x))\n'
        '        try:\n'
        '            h = torch.zeros(3)\n'
        '        except* ValueError:\n'
        '            pass\n'
        '        h += 1\n'
        '        return h\n'
    ),
    # `torch.compile(nn.Sigmoid())` is the Sigmoid
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'def step(x):\n'
        '    act = torch.compile(nn.Sigmoid())\n'
        '    lin = nn.Linear(3, 3)\n'
        '    h = act(lin(x))\n'
        '    h += 1\n'
        '    return h\n'
    ),
    # `.to(copy=True)` copies: no maybe-alias
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '\n'
        '    def forward(self, x):\n'
        '        h = self.fc(x)\n'
        '        y = h.to(copy=True)\n'
        '        z = y\n'
        '        y.add_(1)\n'
        '        return z * 2\n'
    ),
    # `register_parameter(name=...)`
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.register_parameter(name="w", param=nn.Parameter(torch.ones(3)))\n'
        '\n'
        '    def gate(self):\n'
        '        n = len(list(self.parameters()))\n'
        '        g = torch.sigmoid(self.w)\n'
        '        g += n\n'
        '        return g\n'
    ),
    # a one-line suite the flow does not walk
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '\n'
        '    def forward(self, x):\n'
        '        h = torch.sigmoid(self.fc(x))\n'
        '        for _ in range(0): h = torch.zeros(4)\n'
        '        h += 1\n'
        '        return h\n'
    ),
    # `a, b = self.a, h`: libcst's walk sees the attribute's name, so this is no parallel pair
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '        self.a = 0.5\n'
        '\n'
        '    def forward(self, x):\n'
        '        h = self.fc(x)\n'
        '        a, b = self.a, h\n'
        '        c = torch.sigmoid(a)\n'
        '        c += 1\n'
        '        return c\n'
    ),
    # a copy by advanced indexing, then `.float()`: the flow links nothing, so `z` is a live alias
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '\n'
        '    def forward(self, x, idx):\n'
        '        h = self.fc(x)\n'
        '        y = h[idx].float()\n'
        '        z = y\n'
        '        y.add_(1)\n'
        '        return z * 2\n'
    ),
    # an unpacking of a chunk of `.float()`: the flow makes no alias, so `z` is a live alias
    (
        'import torch\n'
        'import torch.nn as nn\n'
        '\n'
        '\n'
        'class M(nn.Module):\n'
        '    def __init__(self):\n'
        '        super().__init__()\n'
        '        self.fc = nn.Linear(4, 4)\n'
        '\n'
        '    def forward(self, x):\n'
        '        h = self.fc(x)\n'
        '        a = 0\n'
        '        a, b = h.float().chunk(2)\n'
        '        z = a\n'
        '        a.add_(1)\n'
        '        return z * 2\n'
    ),
]


@pytest.mark.parametrize("source", REVIEWED)
def test_hazards_reviewed_forms_keep_their_finding(engine, source):
    kept, found = _same(engine, source)
    assert "GF101" in kept and [f.rule for f in found if f.rule == "GF101"] == ["GF101"]
