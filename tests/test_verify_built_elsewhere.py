"""Units built where the verifier did not look before: inside a unittest method from `self` after `setUp()`
(unittest_build.py). Each case asserts the verdict reached, that a rewrite whose call changes the result is still
refused, and that what unittest would skip is not built."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import Verifier, VerifyRequest

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def verifier():
    with Verifier(jobs=2, timeout_s=20.0) as v:
        yield v


def swap(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new)


# --------------------------------------------------------------------------- a receiver built from a TestCase's self

TESTS = """
import unittest

import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, inner, scale=1.0, hooked=False):
        super().__init__()
        self.inner = inner
        self.scale = scale
        if hooked:
            self.register_forward_hook(lambda mod, inp, out: out * 2)

    def forward(self, batch):
        return self.inner(batch["x"]) * self.scale


class TestScorer(unittest.TestCase):
    def setUp(self):
        self.net = nn.Linear(3, 2)
        self.batch = {"x": torch.randn(4, 3)}

    def test_plain(self):
        scale = 2.0
        unused = open("never-read.txt")
        scorer = Scorer(self.net, scale=scale)
        out = scorer.forward(self.batch)
        self.assertEqual(out.shape, (4, 2))

    def test_hooked(self):
        scorer = Scorer(self.net, hooked=True)
        batch = {"x": self.batch["x"] + 1}
        out = scorer.forward(batch)


    def test_hook_added_by_the_test(self):
        scorer = Scorer(self.net)
        handle = self.net.register_forward_hook(lambda mod, inp, out: out + 1)
        out = scorer.forward(dict(self.batch))


@unittest.skipUnless(torch.cuda.device_count() > 7, "needs 8 GPUs")
class TestOnGpus(unittest.TestCase):
    def setUp(self):
        self.net = nn.Linear(3, 2)

    def test_it(self):
        scorer = Scorer(self.net)
        out = scorer.forward({"x": torch.randn(4, 3)})
"""


def _forward_call(path, src, call_old, setup, line):
    new = call_old.replace(".forward(", "(")
    contract = {"kind": "forward-call", "receiver": "scorer", "in_class": False, "call_old": call_old,
                "call_new": new, "setup": setup}
    return VerifyRequest(path=path, original=src, rewritten=swap(src, call_old, new), rule="GF305", line=line,
                         contract=contract, project_root=None)


def test_forward_call_receiver_built_in_a_unittest_method(verifier, tmp_path):
    """fairseq's tests/test_sequence_generator.py form: `generator = SequenceGenerator([self.model], ...)` in a
    test method, `self.model` made by setUp(), then `generator.forward(self.sample)`."""
    src = textwrap.dedent(TESTS)
    path = str(tmp_path / "test_scorer.py")
    plain, hooked, skipped, unrun = verifier.verify_many([
        _forward_call(path, src, "scorer.forward(self.batch)", "scorer = Scorer(self.net, scale=scale)", 26),
        _forward_call(path, src, "scorer.forward(batch)", "scorer = Scorer(self.net, hooked=True)", 33),
        _forward_call(path, src, 'scorer.forward({"x": torch.randn(4, 3)})', "scorer = Scorer(self.net)", 49),
        _forward_call(path, src, "scorer.forward(dict(self.batch))", "scorer = Scorer(self.net)", 39),
    ])
    assert plain.verdict == "equivalent", plain
    assert ("`scorer` built by `scorer = Scorer(self.net, scale=scale)` in the test TestScorer.test_plain, with "
            "`self` a TestScorer after its setUp() and `scale = 2.0` run before it; input: the call's own arguments "
            "`self.batch`") in plain.detail, plain
    assert "open(" not in plain.detail  # not needed by the build, so not run (it would raise FileNotFoundError)
    # the module's own hook doubles the output: calling the module changes what the test computes
    assert hooked.verdict == "changes-behaviour", hooked
    assert "`batch = {'x': self.batch['x'] + 1}` run before it" in hooked.detail, hooked
    assert skipped.verdict == "untestable", skipped
    assert "the class TestOnGpus is skipped by unittest here (needs 8 GPUs)" in skipped.detail, skipped
    # a hook the test registers in a statement the verifier does not run: not built without it
    assert unrun.verdict == "untestable" and "may register hooks" in unrun.detail, unrun


# --------------------------------------------------------------------------- a helper's parameter, built by its caller

HELPER = """
import torch
import torch.nn as nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Net(nn.Module):
    def __init__(self, num_features, num_classes, hooked=False):
        super().__init__()
        self.fc = nn.Linear(num_features, num_classes)
        if hooked:
            self.register_forward_hook(lambda mod, inp, out: out * 2)

    def forward(self, x):
        return self.fc(x)


model = Net(num_features=6, num_classes=3{hooked})
model = model.to(DEVICE)


def compute_accuracy(net, loader):
    correct = 0
    for features, targets in loader:
        logits = net.forward(features)
        correct += (logits.argmax(1) == targets).sum()
    return correct


print(compute_accuracy(model, train_loader))
print(compute_accuracy(model, test_loader))
"""


def test_forward_call_on_a_helpers_parameter_built_by_its_callers(verifier, tmp_path):
    """rasbt's stat453 notebooks: `compute_accuracy(net, loader)` is called with the notebook's `model` (twice);
    the rule's setup is the caller's build, then `net = model`, and the verifier builds it."""
    from gradfix.codemods import RULES_BY_ID
    from gradfix.engine import Engine

    reqs = []
    for hooked in ("", ", hooked=True"):
        src = textwrap.dedent(HELPER).format(hooked=hooked)
        findings, errors = Engine([RULES_BY_ID["GF305"]]).lint_source(src, "nb.py")
        assert errors == [] and len(findings) == 1, findings
        contract = dict(findings[0].fix.contract)
        assert contract["receiver"] == "net" and contract["setup"] == "model = model.to(DEVICE)\nnet = model", contract
        reqs.append(VerifyRequest(path=str(tmp_path / "nb.py"), original=src,
                                  rewritten=swap(src, "net.forward(features)", "net(features)"), rule="GF305",
                                  line=findings[0].span.line, contract=contract, project_root=None))
    plain, hooked = verifier.verify_many(reqs)
    assert plain.verdict == "equivalent", plain
    assert ("`net` built by `model = Net(num_features=6, num_classes=3)` then `model = model.to(DEVICE)`, passed as "
            "`net` (`net = model`)") in plain.detail, plain
    assert hooked.verdict == "changes-behaviour", hooked


def test_helper_called_with_two_different_modules_gets_no_setup():
    """xor-problem's `plot_decision_regions(..., classifier=model1)` and `(..., classifier=model2)`: two builds, so
    no one setup stands for every call."""
    from gradfix.codemods import RULES_BY_ID
    from gradfix.engine import Engine

    src = textwrap.dedent(HELPER).format(hooked="").replace(
        "print(compute_accuracy(model, test_loader))",
        "other = Net(num_features=6, num_classes=2)\nprint(compute_accuracy(other, test_loader))")
    findings, _errors = Engine([RULES_BY_ID["GF305"]]).lint_source(src, "nb.py")
    assert len(findings) == 1 and "setup" not in findings[0].fix.contract, findings[0].fix.contract


# --------------------------------------------------------------------------- a notebook's device from a cuda flag

FLAG = """
import torch
import torch.nn as nn
cuda = torch.cuda.is_available()
device = "cuda:0" if cuda else "cpu"
losses = [float(v) for v in open("losses.txt")]


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


model = Flow().to(device)
z = model.forward(torch.randn(3, 2).to(device))
"""


def test_strip_keeps_a_cuda_flag_and_the_device_it_picks():
    """DeepLearningDTU's flow-models notebook: `cuda = torch.cuda.is_available()`, then `device = ... if cuda
    else ...`; both run at load (a device query and a choice between literals), the file read does not."""
    import ast

    from gradfix.verify import source as S

    kept, computed, dropped = S.classify_module(ast.parse(textwrap.dedent(FLAG)))
    assert "cuda = torch.cuda.is_available()" in [ast.unparse(s) for s in kept]
    assert [ast.unparse(s) for s in computed] == ["device = 'cuda:0' if cuda else 'cpu'"]
    assert any("open('losses.txt')" in ast.unparse(s) for s in dropped)


def test_forward_call_on_a_model_moved_to_a_flag_chosen_device(verifier, tmp_path):
    src = textwrap.dedent(FLAG)
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False,
                "call_old": "model.forward(torch.randn(3, 2).to(device))",
                "call_new": "model(torch.randn(3, 2).to(device))", "setup": "model = Flow().to(device)"}
    (out,) = verifier.verify_many([VerifyRequest(
        path=str(tmp_path / "flow.py"), original=src, rewritten=swap(src, "model.forward(", "model("), rule="GF305",
        line=21, contract=contract, project_root=None)])
    assert out.verdict == "equivalent", out


# --------------------------------------------------------------------------- a block built by its enclosing module

BLOCKS = """
import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(cfg["emb_dim"], 2 * cfg["emb_dim"]), nn.GELU(),
                                    nn.Linear(2 * cfg["emb_dim"], cfg["emb_dim"]))

    def forward(self, x):
        return self.layers(x)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ff = FeedForward(cfg)
        self.norm = nn.LayerNorm(cfg["emb_dim"])

    def forward(self, x):
        return x + self.ff(self.norm(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.blocks = nn.Sequential(*[Block(cfg) for _ in range(cfg["n_layers"])])

    def forward(self, idx):
        return self.blocks(self.emb(idx))


class Shifted(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        cfg["emb_dim"] += 1
        self.ff = FeedForward(cfg)
"""

TRAIN = """
from model import GPT

GPT_CONFIG = {"emb_dim": 8, "n_layers": 2, "vocab_size": 20}


def main():
    model = GPT(GPT_CONFIG)
"""


def test_block_built_with_the_arguments_its_enclosing_module_passes(verifier, tmp_path):
    """LLMs-from-scratch's previous_chapters.py: `FeedForward(cfg)` is built only in `TransformerBlock(cfg)`, built
    only in `GPTModel(cfg)`, which train.py builds from its config dict. `Shifted` mutates its cfg before passing
    it: not a source of FeedForward's arguments."""
    src = textwrap.dedent(BLOCKS)
    (tmp_path / "model.py").write_text(src)
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN))
    path = str(tmp_path / "model.py")

    def rewrite(new: str) -> VerifyRequest:
        return VerifyRequest(path=path, original=src, rewritten=swap(src, "return self.layers(x)", new), rule="GF101",
                             line=1, contract={"kind": "equal"}, project_root=str(tmp_path))

    same, wrong = verifier.verify_many([rewrite("return self.layers(x) + 0.0"), rewrite("return self.layers(x) * 2")])
    assert same.verdict == "equivalent", same
    assert wrong.verdict == "failed", wrong
    assert "GPT built as `GPT(GPT_CONFIG)` (the call at train.py, line 8)" in wrong.detail, wrong
    assert "Block built with the arguments GPT.__init__ passes it: `Block(cfg)`" in wrong.detail, wrong
    assert "FeedForward built with the arguments Block.__init__ passes it: `FeedForward(cfg)`" in wrong.detail, wrong
    assert "Shifted" not in wrong.detail


def test_enclosing_calls_skip_a_parameter_the_constructor_mutates():
    import ast

    from gradfix.verify.enclosing import enclosing_calls

    found = enclosing_calls(ast.parse(textwrap.dedent(BLOCKS)), "FeedForward")
    assert [(e.holder, e.text, e.params) for e in found] == [("Block", "FeedForward(cfg)", ["cfg"])]


FLOAT32_INSIDE = """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x) @ torch.ones(2, 2, dtype=torch.float32)


policy = Policy()


def act(obs):
    return policy.forward(obs)
"""


def _forward_call_request(tmp_path, src: str, old: str, new: str) -> VerifyRequest:
    from gradfix.codemods import RULES_BY_ID
    from gradfix.engine import Engine

    findings, errors = Engine([RULES_BY_ID["GF305"]]).lint_source(src, "agent.py")
    assert errors == [] and len(findings) == 1, findings
    return VerifyRequest(path=str(tmp_path / "agent.py"), original=src, rewritten=swap(src, old, new), rule="GF305",
                         line=findings[0].span.line, contract=dict(findings[0].fix.contract), project_root=None)


def test_forward_call_on_a_module_that_rejects_float64_is_compared_in_float32(verifier, tmp_path):
    """A forward that mixes in a float32 tensor of its own raises on every float64 input: the module is built again
    in fp32 and the two calls compared there (the detail says fp32 and that the check is weak), not given up."""
    req = _forward_call_request(tmp_path, FLOAT32_INSIDE, "policy.forward(obs)", "policy(obs)")
    (out,) = verifier.verify_many([req])
    assert out.verdict == "equivalent", out
    assert "fp32" in out.detail and "Weak check: fp32" in out.detail and "verifier error" not in out.detail, out


def test_forward_call_in_float32_still_sees_a_hook(verifier, tmp_path):
    """The fp32 retry compares as the fp64 check does: a hook that changes the output makes the call differ."""
    src = swap(FLOAT32_INSIDE, "self.fc = nn.Linear(4, 2)\n",
               "self.fc = nn.Linear(4, 2)\n        self.register_forward_hook(lambda m, i, o: o + 1.0)\n")
    req = _forward_call_request(tmp_path, src, "policy.forward(obs)", "policy(obs)")
    (out,) = verifier.verify_many([req])
    assert out.verdict == "changes-behaviour", out
    assert "forward hook" in out.detail, out


def test_forward_call_on_a_module_that_rejects_float64_and_float32_stays_untestable(verifier, tmp_path):
    """A forward whose own tensor is float16 fails in both precisions: untestable, naming the failure."""
    src = swap(FLOAT32_INSIDE, "dtype=torch.float32", "dtype=torch.float16")
    req = _forward_call_request(tmp_path, src, "policy.forward(obs)", "policy(obs)")
    (out,) = verifier.verify_many([req])
    assert out.verdict == "untestable", out
    assert "dtype" in out.detail and "verifier error" not in out.detail, out
