"""GF305 (`m.forward(x)` -> `m(x)`) when the file attaches hooks in code the check does not run (skipped_hooks.py).

The check builds the receiver from its own statement (`model = Net()`) and compares the two calls on that build.
A hook the file adds elsewhere (a helper that the skipped module-level code calls, `model.apply(fn)`, a pruning
call, a helper of the file the class comes from) is not on that build: the two calls agree there while they differ
on the file's own object. Such a verdict is `untestable`, naming the line; a file without any hook-like call, or one
whose only hook is the module's own `__init__` registering it on itself (which the build runs), keeps its verdict.
"""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

SCRIPT = """
import torch
import torch.nn as nn
{imports}

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
{init}
    def forward(self, x):
        return self.fc(x)

{helpers}
model = Head()
{after}
x = torch.randn(2, 4)
y = model.forward(x)
"""

ADD_HOOK = """
def add_scaling(m):
    m.fc.register_forward_hook(lambda mod, inp, out: out * 2)
"""

PER_LAYER = """
def scale_linear(m):
    if isinstance(m, nn.Linear):
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 3,))
"""

RECORD = "        self.seen = []\n        self.register_forward_hook(lambda mod, inp, out: self.seen.append(1))\n"

NETS = """
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def add_scaling(m):
    m.fc.register_forward_hook(lambda mod, inp, out: out * 2)
"""

IMPORTED = """
import torch
from nets import Head, add_scaling

model = Head()
add_scaling(model)
x = torch.randn(2, 4)
y = model.forward(x)
"""


def _request(root, src: str, name: str = "train.py") -> VerifyRequest:
    call, new = "model.forward(x)", "model(x)"
    (root / name).write_text(src, encoding="utf-8")
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / name), original=src, rewritten=src.replace(call, new), rule="GF305",
                         line=line, contract={"kind": "forward-call", "receiver": "model", "in_class": False,
                                              "call_old": call, "call_new": new, "setup": "model = Head()"},
                         project_root=str(root))


def _script(root, imports: str = "", init: str = "", helpers: str = "", after: str = "") -> VerifyRequest:
    src = (textwrap.dedent(SCRIPT).replace("{imports}", imports).replace("{init}\n", init)
           .replace("{helpers}", helpers).replace("{after}", after))
    return _request(root, src)


def _imported(root) -> VerifyRequest:
    (root / "nets.py").write_text(textwrap.dedent(NETS), encoding="utf-8")
    return _request(root, textwrap.dedent(IMPORTED))


CASES = {
    "plain": lambda r: _script(r),
    "own_record_hook": lambda r: _script(r, init=RECORD),
    "helper_hook": lambda r: _script(r, helpers=ADD_HOOK, after="add_scaling(model)"),
    "apply_hook": lambda r: _script(r, helpers=PER_LAYER, after="model.apply(scale_linear)"),
    "pruned": lambda r: _script(r, imports="from torch.nn.utils import prune",
                                after="prune.l1_unstructured(model.fc, 'weight', amount=0.5)"),
    "main_hook": lambda r: _script(r, after="if __name__ == '__main__':\n"
                                            "    model.register_forward_hook(lambda mod, inp, out: out + 1)"),
    "imported": _imported,
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    reqs = [make(tmp_path_factory.mktemp(name)) for name, make in CASES.items()]
    return dict(zip(CASES, shared_verifier.verify_many(reqs)))


def test_no_hook_like_call_keeps_its_verdict(verdicts):
    assert verdicts["plain"].verdict == "equivalent", verdicts["plain"]


def test_the_modules_own_init_hook_runs_in_the_build(verdicts):
    v = verdicts["own_record_hook"]
    assert v.verdict == "equivalent", v
    assert "1 registered hook" in v.detail, v


@pytest.mark.parametrize("case, line_text", [
    ("helper_hook", "m.fc.register_forward_hook"),
    ("apply_hook", "m.register_forward_pre_hook"),
    ("pruned", "prune.l1_unstructured(model.fc"),
    ("main_hook", "model.register_forward_hook"),
])
def test_hook_attached_by_skipped_code_is_untestable(verdicts, case, line_text):
    v = verdicts[case]
    assert v.verdict == "untestable", v
    assert "hook" in v.detail and line_text in v.detail and "line " in v.detail, v


def test_hook_attached_by_the_classs_file_is_untestable(verdicts):
    v = verdicts["imported"]
    assert v.verdict == "untestable", v
    assert "nets.py" in v.detail and "m.fc.register_forward_hook" in v.detail, v


# the fact itself, on source alone (no verifier)

UNITS = """
import torch.nn as nn
from torch.nn.utils.parametrizations import orthogonal
from torch.nn.utils import weight_norm


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = weight_norm(nn.Linear(2, 2))
        self.register_forward_hook(self._keep)

    def forward(self, x):
        x.register_hook(lambda g: g)
        return self.fc(x)


class Spy:
    def __init__(self, model):
        model.register_forward_hook(print)


def tie(m):
    orthogonal(m.fc)


net = Block()
net.register_forward_hook(print)
net.apply(weight_norm)
"""


def test_what_the_build_runs_and_what_it_skips():
    import ast

    from gradfix.verify.skipped_hooks import skipped_hooks

    tree = ast.parse(textwrap.dedent(UNITS))
    lines = dict(skipped_hooks(tree))
    # the module's own __init__ (on itself, on a layer it makes) and a tensor hook in forward: run by any build
    assert not any("self." in t or "weight_norm(nn.Linear" in t or "x.register_hook" in t for t in lines.values())
    # a plain object hooking what it is given, a name imported from parametrizations, the skipped top level
    assert any(t.startswith("model.register_forward_hook") for t in lines.values()), lines
    assert "orthogonal(m.fc)" in lines.values() and "net.apply(weight_norm)" in lines.values(), lines
    assert "net.register_forward_hook(print)" in lines.values(), lines
    # a registration the setup itself runs is not skipped (once: a second identical one would be)
    ran = dict(skipped_hooks(tree, ran="net = Block()\nnet.register_forward_hook(print)"))
    assert "net.register_forward_hook(print)" not in ran.values(), ran
    assert len(ran) == len(lines) - 1


def test_a_file_without_hook_like_calls_has_nothing_skipped():
    import ast

    from gradfix.verify.skipped_hooks import skipped_hooks

    assert skipped_hooks(ast.parse(textwrap.dedent(NETS).replace("def add_scaling(m):\n    m.fc.register_forward_hook"
                                                                  "(lambda mod, inp, out: out * 2)\n", ""))) == []
