"""GF305 on a module whose own backward raises in both call forms (backward_fails.py): outputs and the backward's
error are compared; a hook that changes the output, or a forward that raises, keeps it untestable."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import Verifier, VerifyRequest

pytest.importorskip("torch")

# An autoregressive step that writes each column into the tensor its conditioner just read: the forward runs, and
# every backward through it raises (a variable needed for gradient computation was modified in place).
SRC = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Stepper(nn.Module):
        def __init__(self, dim=3):
            super().__init__()
            self.dim = dim
            self.cond = nn.Linear(dim, dim)

        def forward(self, z):
            x = torch.zeros_like(z)
            for i in range(self.dim):
                shift = self.cond(x)
                x[:, i] = z[:, i] + shift[:, i]
            return x


    def twice(module, inputs, output):
        return output * 2


    def sample(z):
        net = Stepper()
        return net.forward(z)
''')


def _request(src: str, path: str, setup: str = "net = Stepper()") -> VerifyRequest:
    old, new = "net.forward(z)", "net(z)"
    contract = {"kind": "forward-call", "receiver": "net", "in_class": False, "call_old": old, "call_new": new,
                "setup": setup}
    return VerifyRequest(path=path, original=src, rewritten=src.replace(old, new), rule="GF305", line=26,
                         contract=contract, project_root=None)


def _verify(req: VerifyRequest):
    with Verifier(jobs=1, timeout_s=20.0) as v:
        return v.verify_many([req])[0]


def test_backward_that_raises_in_both_forms_compares_outputs(tmp_path):
    res = _verify(_request(SRC, str(tmp_path / "flow.py")))
    assert res.verdict == "equivalent", res
    assert "gradients were not compared" in res.detail and "inplace" in res.detail, res
    assert "ran 1 time through `net(x)` and 0 times through `net.forward(x)`" in res.detail, res


def test_a_hook_that_changes_the_output_is_not_equivalent(tmp_path):
    """Same broken backward, but the call runs a hook that doubles the output: never `equivalent`."""
    res = _verify(_request(SRC, str(tmp_path / "flow.py"), setup="net = Stepper()\nnet.register_forward_hook(twice)"))
    assert res.verdict != "equivalent", res


def test_a_forward_that_raises_stays_untestable(tmp_path):
    src = SRC.replace("        return x\n", "        raise ValueError('no forward here')\n")
    assert src != SRC
    res = _verify(_request(src, str(tmp_path / "flow.py")))
    assert res.verdict == "untestable", res


# A forward that takes autograd.grad itself (an energy model's score, a flow's log-det): it needs grad mode, so the
# check's hook probe, run under no_grad first, used to end the check as a "verifier error".
SCORE = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Score(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 1)

        def forward(self, x):
            if not x.requires_grad:
                x = x.detach().requires_grad_()
            energy = torch.tanh(self.lin(x)).sum()
            (g,) = torch.autograd.grad(energy, x, create_graph=True)
            return g


    def double(module, inputs, output):
        return output * 2


    def scores(x):
        net = Score()
        return net.forward(x)
''')


def _compare(with_hook: bool):
    """checks_forward._compare_call on Score, built and given an input here (the input inference runs under
    no_grad, so a verdict through the worker needs the call's own argument; call_inputs.py on branch v13)."""
    import types

    import torch

    from gradfix.verify.checks_forward import _compare_call
    from gradfix.verify.inputs import make_leaves

    ns: dict = {}
    exec(SCORE, ns)  # noqa: S102 - our own test module
    torch.manual_seed(0)
    net = ns["Score"]().double()
    if with_hook:
        net.register_forward_hook(ns["double"])
    ctx = types.SimpleNamespace(tol=1e-9, dtype=torch.float64, weak_units=[])
    leaves = make_leaves((torch.randn(4, 3, dtype=torch.float64),), torch.float64)
    return _compare_call(ctx, net, leaves, {}, "net", "<net(x)>", "`net` built here")


def test_a_forward_that_needs_grad_mode_gets_a_verdict():
    out = _compare(False)
    assert out.verdict == "equivalent", out
    assert "ran 1 time through `net(x)` and 0 times through `net.forward(x)`" in out.detail, out


def test_a_forward_that_needs_grad_mode_with_a_changing_hook_is_not_equivalent():
    out = _compare(True)
    assert out.verdict == "changes-behaviour", out


LOGDET = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class LogDetFlow(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(dim, 16), nn.Tanh(), nn.Linear(16, dim))

        def forward(self, x):
            y = x + self.net(x)
            (row,) = torch.autograd.grad(y[:, 0].sum(), x, create_graph=True)
            return y, row[:, 0].abs().log()


    flow = LogDetFlow(3)


    def log_density(batch):
        z, logdet = flow.forward(batch)
        return -0.5 * (z ** 2).sum(1) + logdet
''')


def test_the_input_search_runs_a_forward_that_takes_autograd_grad_with_grad_on(tmp_path, shared_verifier):
    """No call-site tensor to copy (`batch` is a parameter): the shape comes from the first Linear, and the probe
    of that input, run under no_grad first, retries with grad on instead of calling the shape unknown."""
    old, new = "flow.forward(batch)", "flow(batch)"
    line = next(i for i, t in enumerate(LOGDET.splitlines(), 1) if old in t)
    req = VerifyRequest(path=str(tmp_path / "flow.py"), original=LOGDET, rewritten=LOGDET.replace(old, new),
                        rule="GF305", line=line, project_root=None,
                        contract={"kind": "forward-call", "receiver": "flow", "in_class": False, "call_old": old,
                                  "call_new": new, "setup": "flow = LogDetFlow(3)"})
    res = shared_verifier.verify_many([req])[0]
    assert res.verdict == "equivalent", res
    assert "input inferred" in res.detail, res
