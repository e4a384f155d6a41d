"""Precision of GF211, GF301, GF304, GF305 and GF306 on shapes seen in public code (issue 11):
each rule fires only where it can show the hazard; unknown means silence."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.codemods import RULES_BY_ID
from gradfix.engine import Engine


def found(rule: str, source: str) -> list[int]:
    engine = Engine([RULES_BY_ID[rule]])
    findings, errors = engine.lint_source(textwrap.dedent(source), "case.py")
    assert errors == []
    return [f.span.line for f in findings if f.rule == rule]


# -- GF301 ---------------------------------------------------------------------

@pytest.mark.parametrize("test", [
    "_TORCH_GE_2_4", "is_torch_version('>=', '2.3')", "hasattr(torch, 'amp')",
    "version.parse(torch.__version__) >= version.parse('2.4')", "TORCH_VERSION >= (2, 4)",
    "not torch.__version__.startswith('1.')", "torch_greater_or_equal('2.4')",
])
def test_gf301_version_branches_are_left_alone(test):
    src = f"""
    import torch
    from packaging import version
    if {test}:
        scaler = torch.amp.GradScaler("cuda")
    else:
        scaler = torch.cuda.amp.GradScaler()
    """
    assert found("GF301", src) == []


def test_gf301_flag_assigned_at_module_level_counts_as_version_test():
    src = """
    import torch
    NEW_AMP = hasattr(torch, "amp")
    def scaler():
        return torch.amp.GradScaler("cuda") if NEW_AMP else torch.cuda.amp.GradScaler()
    """
    assert found("GF301", src) == []


@pytest.mark.parametrize("exc", ["AttributeError", "(ImportError, TypeError)", "Exception", ""])
def test_gf301_try_fallbacks_either_branch(exc):
    src = f"""
    import torch
    try:
        a = torch.amp.GradScaler("cuda")
    except {exc}:
        a = torch.cuda.amp.GradScaler()
    try:
        b = torch.cuda.amp.autocast()
    except {exc}:
        b = torch.autocast("cuda")
    """
    assert found("GF301", src) == []


def test_gf301_unrelated_guards_still_fire():
    src = """
    import torch
    if torch.cuda.is_available():
        s = torch.cuda.amp.GradScaler()
    try:
        c = torch.cuda.amp.autocast()
    except AttributeError:
        c = None
    try:
        d = torch.cuda.amp.autocast()
    except RuntimeError:
        d = torch.autocast("cuda")
    """
    assert found("GF301", src) == [4, 6, 10]


def test_gf301_name_imported_both_ways_is_left_alone():
    src = """
    try:
        from torch.amp import GradScaler
    except ImportError:
        from torch.cuda.amp import GradScaler
    scaler = GradScaler()
    """
    assert found("GF301", src) == []


# -- GF211 ---------------------------------------------------------------------

_GF211_LOOP = """
def fit(loader, val, epochs):
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            print(sum(F.mse_loss(model(x), y).item() for x, y in val))
"""


@pytest.mark.parametrize("body, fires", [
    ("self.fc = nn.Linear(4, 1)  # Dropout( and BatchNorm1d( removed\n        # x = Variable(x)", False),
    ('self.fc = nn.Linear(4, 1)\n        self.note = "uses Dropout(0.5)"', False),
    ("self.fc = nn.Linear(4, 1)\n        self.v = Variable(torch.zeros(1))", False),
    ("self.fc = nn.Sequential(nn.Linear(4, 1), nn.Dropout(0.1))", True),
    ("self.fc = nn.Linear(4, 1)\n        self.p = nn.BatchNorm1d(1)", True),
])
def test_gf211_mode_dependence_from_the_tree(body, fires):
    src = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.autograd import Variable\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        {body}\n\n    def forward(self, x):\n        return self.fc(x)\n\n" + _GF211_LOOP
    )
    assert bool(found("GF211", src)) is fires


# -- GF304 ---------------------------------------------------------------------

@pytest.mark.parametrize("register", [
    'setattr(self, f"fc{i}", layer)', "self.add_module(str(i), layer)", 'self.register_module(f"l{i}", layer)',
    'self.__setattr__(f"fc{i}", layer)', 'self._keep(f"fc{i}", layer)',
])
def test_gf304_list_registered_in_its_filling_loop(register):
    src = f"""
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = []
            for i in range(3):
                layer = nn.Linear(4, 4)
                {register}
                self.layers.append(layer)
        def _keep(self, name, module):
            self.add_module(name, module)
    """
    assert found("GF304", src) == []


def test_gf304_comprehension_registered_by_a_later_loop():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = [nn.Linear(4, 2) for _ in range(3)]
            for i, head in enumerate(self.heads):
                setattr(self, f"head{i}", head)
            self.tails = [nn.Linear(4, 2) for _ in range(3)]
            [setattr(self, f"tail{i}", t) for i, t in enumerate(self.tails)]
    """
    assert found("GF304", src) == []


def test_gf304_loop_registering_something_else_still_fires():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = []
            for i in range(3):
                norm = nn.LayerNorm(4)
                setattr(self, f"norm{i}", norm)
                self.layers.append(nn.Linear(4, 4))
    """
    assert found("GF304", src) == [6]


# -- GF305 ---------------------------------------------------------------------

_NET = """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
"""


@pytest.mark.parametrize("code", [
    "def f(model, x):\n    return model.forward(x)",
    "from .other import Solver\ndef f(x):\n    net = Solver()\n    return net.forward(x)",
    "def load(p):\n    return torch.jit.load(p)\ndef f(p, x):\n    model = load(p)\n    return model.forward(x)",
    "class T:\n    def __init__(self, model):\n        self.model = model\n    def step(self, x):\n"
    "        return self.model.forward(x)",
    "class T:\n    def __init__(self, p):\n        self.model = torch.jit.load(p)\n    def step(self, x):\n"
    "        return self.model.forward(x)",
    "class T:\n    def __init__(self):\n        self.net = Net()\n    def swap(self, other):\n"
    "        self.net = other\n    def step(self, x):\n        return self.net.forward(x)",
])
def test_gf305_unknown_receivers_are_left_alone(code):
    assert found("GF305", _NET + code + "\n") == []


@pytest.mark.parametrize("code, line", [
    ("def f(model: nn.Module, x):\n    return model.forward(x)", 11),
    ("def f(x):\n    model = Net().to('cpu')\n    return model.forward(x)", 12),
    ("class Agent:\n    def __init__(self):\n        self.net = Net()\n    def act(self, s):\n"
     "        return self.net.forward(s)", 14),
    ("class Agent:\n    def __init__(self, net: nn.Module):\n        self.net = net\n    def act(self, s):\n"
     "        return self.net.forward(s)", 14),
    ("class Agent:\n    def __init__(self):\n        self.net = Net()\ndef g(s):\n    agent = Agent()\n"
     "    return agent.net.forward(s)", 15),
])
def test_gf305_module_receivers_fire(code, line):
    assert found("GF305", _NET + code + "\n") == [line]


# -- GF306 ---------------------------------------------------------------------

@pytest.mark.parametrize("code", [
    "def checkpoint(state, path):\n    torch.save(state, path)\ncheckpoint({}, 'a.pt')",
    "def f(block, x, checkpoint):\n    return checkpoint(block, x)",
    "def f(block, x):\n    checkpoint = make()\n    return checkpoint(block, x)",
    "def f(block, x):\n    from .utils import checkpoint\n    return checkpoint(block, x)",
    "import deepspeed\ndef f(block, x):\n    return deepspeed.checkpointing.checkpoint(block, x)",
    "if FLAG:\n    from deepspeed.checkpointing import checkpoint as ck\nelse:\n"
    "    from torch.utils.checkpoint import checkpoint as ck\ndef f(block, x):\n    return ck(block, x)",
])
def test_gf306_other_checkpoints_are_left_alone(code):
    src = "import torch\nfrom torch.utils.checkpoint import checkpoint\n" + code + "\n"
    assert found("GF306", src) == []


@pytest.mark.parametrize("code", [
    "from torch.utils.checkpoint import checkpoint\ndef f(block, x):\n    return checkpoint(block, x)",
    "from torch.utils.checkpoint import checkpoint as ckpt\ndef f(block, x):\n    return ckpt(block, x)",
    "import torch.utils.checkpoint as cp\ndef f(block, x):\n    return cp.checkpoint(block, x)",
    "def f(block, x):\n    return torch.utils.checkpoint.checkpoint(block, x)",
    "from torch.utils.checkpoint import checkpoint\ndef checkpoint_dir():\n    return 'ckpt/'\n"
    "def f(block, x):\n    return checkpoint(block, x)",
])
def test_gf306_torch_checkpoint_fires(code):
    # the file's only call of `f` passes data, which does not require grad: the hazard shows
    src = "import torch\n" + code + "\nf(torch.nn.Linear(2, 2), torch.randn(3, 2))\n"
    assert len(found("GF306", src)) == 1


def test_gf306_leaves_inputs_that_require_grad_or_are_unknown():
    base = "import torch\nfrom torch.utils.checkpoint import checkpoint\ndef f(block, x):\n    return checkpoint(block, x)\n"
    assert found("GF306", base) == []  # nobody calls f: unknown
    stem = base + "stem = torch.nn.Linear(2, 2)\nf(torch.nn.Linear(2, 2), stem(torch.randn(3, 2)))\n"
    assert found("GF306", stem) == []  # an activation: the reentrant variant builds the graph
