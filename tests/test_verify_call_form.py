"""A direct GF305 check compares `m.forward(x)` with `m(x)` on a module built from the original file; its verdict is a
proof of the rewrite only when the rewrite changed that call's form and nothing else (verify/call_form.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify.call_form import call_form_only

SRC = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 2)

        def forward(self, x):
            return self.lin(x)


    def run():
        net = Net()
        x = torch.randn(3, 4)
        out = net.forward(x)
        return out.sum()


    def other(net, x):
        return net.forward(x)
''')
LINE = SRC.splitlines().index("    out = net.forward(x)") + 1


def _form(new: str, call: str = "net.forward(x)", line: int | None = LINE) -> str | None:
    return call_form_only(ast.parse(SRC), ast.parse(new), call, line)


def test_the_call_alone_rewritten_is_the_call_form():
    assert _form(SRC.replace("out = net.forward(x)", "out = net(x)")) is None


def test_a_second_copy_of_the_call_left_alone_is_fine_and_both_rewritten_too():
    # the finding's own line is rewritten; the equal call in `other` is left or rewritten as well (each a call form)
    assert _form(SRC.replace("out = net.forward(x)", "out = net(x)")) is None
    assert _form(SRC.replace("net.forward(x)", "net(x)")) is None


@pytest.mark.parametrize("new", [
    SRC.replace("out = net.forward(x)", "out = net(x) * 2"),  # the value changed too
    SRC.replace("out = net.forward(x)", "out = net(x)").replace("import torch\n", "import torch\nimport fancy\n", 1),
    SRC.replace("out = net.forward(x)", "out = net(x)").replace("return out.sum()", "return out.mean()"),
    SRC,  # nothing rewritten
])
def test_any_other_change_is_named(new):
    why = _form(new)
    assert why is not None and "more than this call's form" in why


def test_a_call_that_is_not_forward_is_refused():
    assert "is not a `.forward(...)` call" in _form(SRC, call="net(x)")


def test_the_verifier_does_not_claim_a_proof_for_a_rewrite_with_other_changes(tmp_path):
    pytest.importorskip("torch")
    from gradfix.verify import Verifier, VerifyRequest

    contract = {"kind": "forward-call", "receiver": "net", "in_class": False, "call_old": "net.forward(x)",
                "call_new": "net(x)", "setup": "net = Net()"}
    exact = SRC.replace("out = net.forward(x)", "out = net(x)")
    more = exact.replace("import torch\n", "import torch\nimport gradfix_no_such_module\n", 1)
    with Verifier(jobs=1, timeout_s=30.0) as v:
        ok, bad = v.verify_many([
            VerifyRequest(path=str(tmp_path / "a.py"), original=SRC, rewritten=r, rule="GF305", line=LINE,
                          contract=contract, project_root=None) for r in (exact, more)])
    assert ok.verdict == "equivalent", ok
    assert bad.verdict == "untestable", bad
    assert "more than this call's form" in bad.detail, bad
