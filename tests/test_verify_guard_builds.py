"""GF305 receivers a setup cannot build alone (guard_builds.py, call_inputs.py):

- built in the `if __name__ == "__main__":` block from the block's constants, then moved with `.to(device)`, the
  device set by code the verifier does not run: built as the block builds it, the placement left to the check;
- a module with raw parameters (no layer tells its input shape) called on a name the file binds to
  `torch.randn(...)`: that tensor's shape is the input, the build's names taken as they stand at the build (a later
  cell rebinds them).

Soundness: a hook that changes the result is still seen (not `equivalent`), a build from a value the file reads at
run time, a placement the class overrides and an argument not made by a tensor factory stay `untestable`."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

GUARD = """
import sys

import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.fc = nn.Linear(width, classes)
{extra}
    def forward(self, x):
        return self.fc(x)


if __name__ == "__main__":
    width = {width}
    classes = 3
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = Tiny(width, classes)
    net = net.to(device)
{added}
    for batch in range(2):
        out = net.forward(torch.randn(5, 6))
"""

DOUBLE_HOOK = ("        self.register_forward_hook(lambda mod, args, out: out * 2)\n")
OVERRIDE = "    def to(self, *args, **kwargs):\n        print('moving')\n        return super().to(*args, **kwargs)\n"

RAW = """
import json

import torch
import torch.nn as nn


class Raw(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n_out, n_in))
{extra}
    def forward(self, x):
        return torch.tanh(x @ self.w.T)


rows = 3
n_in = 4
x = {x}
model = Raw(n_in, 2)
with torch.no_grad():
    y = model.forward(x)

rows = 50
n_in = 9
"""

SCALE_INPUT = "        self.register_forward_pre_hook(lambda mod, args: (args[0] * 3,))\n"


def _guard_request(root, width: str = "6", extra: str = "", setup: str = "net = net.to(device)",
                   added: str = "") -> VerifyRequest:
    src = textwrap.dedent(GUARD).replace("{width}", width).replace("{extra}", extra).replace("{added}\n", added)
    call = "net.forward(torch.randn(5, 6))"
    new = "net(torch.randn(5, 6))"
    (root / "train.py").write_text(src, encoding="utf-8")
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "train.py"), original=src, rewritten=src.replace(call, new), rule="GF305",
                         line=line, contract={"kind": "forward-call", "receiver": "net", "in_class": False,
                                              "call_old": call, "call_new": new, "setup": setup},
                         project_root=str(root))


def _raw_request(root, x: str = "torch.randn(rows, n_in)", extra: str = "") -> VerifyRequest:
    src = textwrap.dedent(RAW).replace("{x}", x).replace("{extra}", extra)
    call, new = "model.forward(x)", "model(x)"
    (root / "nb.py").write_text(src, encoding="utf-8")
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "nb.py"), original=src, rewritten=src.replace(call, new), rule="GF305",
                         line=line, contract={"kind": "forward-call", "receiver": "model", "in_class": False,
                                              "call_old": call, "call_new": new,
                                              "setup": "model = Raw(n_in, 2)"}, project_root=str(root))


MASKED = """
import torch
import torch.nn as nn


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = torch.ones(1, 1, 16, 16, dtype=torch.bool)
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
{extra}
    def forward(self, x):
        x = x.to(torch.float32) * self.mask
        return self.conv(x)


net = Masked()


def show(img):
    return net.forward(img)
"""


def _masked_request(root, extra: str = "") -> VerifyRequest:
    src = textwrap.dedent(MASKED).replace("{extra}", extra)
    call, new = "net.forward(img)", "net(img)"
    (root / "masked.py").write_text(src, encoding="utf-8")
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "masked.py"), original=src, rewritten=src.replace(call, new), rule="GF305",
                         line=line, contract={"kind": "forward-call", "receiver": "net", "in_class": False,
                                              "call_old": call, "call_new": new, "setup": "net = Masked()"},
                         project_root=str(root))


SEQ = """
import sys

import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, hidden)
        self.head = nn.Linear(2 * hidden, vocab)

    def forward(self, tokens, mask, steps):
        h, _ = self.rnn(self.embed(tokens) * mask.unsqueeze(-1))
        ctx = self.proj(h).mean(1, keepdim=True).expand(-1, steps, -1)
        return self.head(torch.cat([ctx, h[:, :steps]], -1))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = {vocab}
    hidden = 8
    model = Tagger(vocab, hidden).to(device)
    tokens, mask = torch.ones((4, 6)).long().to(device), torch.ones((4, 6)).long().to(device)
    logits = model.forward(tokens, mask, 5)
"""


def _seq_request(root, vocab: str = "50") -> VerifyRequest:
    src = textwrap.dedent(SEQ).replace("{vocab}", vocab)
    call, new = "model.forward(tokens, mask, 5)", "model(tokens, mask, 5)"
    (root / "tagger.py").write_text(src, encoding="utf-8")
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "tagger.py"), original=src, rewritten=src.replace(call, new), rule="GF305",
                         line=line, contract={"kind": "forward-call", "receiver": "model", "in_class": False,
                                              "call_old": call, "call_new": new,
                                              "setup": "model = Tagger(vocab, hidden).to(device)"},
                         project_root=str(root))


CASES = {
    "seq": lambda r: _seq_request(r),
    "seq_argv": lambda r: _seq_request(r, vocab="int(sys.argv[1])"),
    "masked": lambda r: _masked_request(r),
    "masked_hooked": lambda r: _masked_request(r, extra=DOUBLE_HOOK),
    "guard": lambda r: _guard_request(r),
    "guard_hooked": lambda r: _guard_request(r, extra=DOUBLE_HOOK),
    "guard_argv": lambda r: _guard_request(r, width="int(sys.argv[1])"),
    "guard_hook_added": lambda r: _guard_request(r, added="    net.register_forward_hook(lambda m, a, o: o * 2)\n"),
    "guard_override": lambda r: _guard_request(r, extra=OVERRIDE),
    "placed_build": lambda r: _guard_request(r, setup="net = Tiny(6, 3).to(device)"),
    "raw": lambda r: _raw_request(r),
    "raw_hooked": lambda r: _raw_request(r, extra=SCALE_INPUT),
    "raw_loaded": lambda r: _raw_request(r, x="torch.tensor(json.load(open('x.json')))"),
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    reqs = [make(tmp_path_factory.mktemp(name)) for name, make in CASES.items()]
    return dict(zip(CASES, shared_verifier.verify_many(reqs)))


def test_built_as_the_main_block_builds_it(verdicts):
    v = verdicts["guard"]
    assert v.verdict == "equivalent", v
    assert "as the `__main__` block builds it" in v.detail and "width = 6, classes = 3" in v.detail, v
    assert "without its placement `net.to(device)`" in v.detail, v


def test_placement_of_a_build_left_to_the_check(verdicts):
    v = verdicts["placed_build"]
    assert v.verdict == "equivalent", v
    assert "without its placement `Tiny(6, 3).to(device)`" in v.detail, v


def test_main_block_build_still_sees_a_hook_that_changes_the_result(verdicts):
    v = verdicts["guard_hooked"]
    assert v.verdict == "changes-behaviour", v
    assert "1 forward hook" in v.detail, v


def test_main_block_build_from_a_runtime_value_is_untestable(verdicts):
    v = verdicts["guard_argv"]
    assert v.verdict == "untestable", v
    assert "as the `__main__` block builds it" not in v.detail, v


def test_hook_the_main_block_adds_after_the_build_is_not_missed(verdicts):
    # the build statement alone would be a module without the hook: no block build, so no verdict about it
    v = verdicts["guard_hook_added"]
    assert v.verdict == "untestable", v
    assert "as the `__main__` block builds it" not in v.detail, v


def test_overridden_placement_is_untestable(verdicts):
    v = verdicts["guard_override"]
    assert v.verdict == "untestable", v
    assert "overrides the placement methods" in v.detail, v


def test_input_from_the_calls_own_tensor_factory(verdicts):
    v = verdicts["raw"]
    assert v.verdict == "equivalent", v
    assert "`x` of shape (3, 4)" in v.detail, v
    # the build reads `n_in` as it stands before it (4), not as the later lines leave it (9)
    assert "n_in = 4" in v.detail and "later code rebinds them" in v.detail, v


def test_call_input_still_sees_a_hook_that_changes_the_result(verdicts):
    v = verdicts["raw_hooked"]
    assert v.verdict == "changes-behaviour", v


def test_argument_not_made_by_a_factory_is_untestable(verdicts):
    v = verdicts["raw_loaded"]
    assert v.verdict == "untestable", v
    assert "input shape unknown for model" in v.detail, v


def test_setup_run_as_the_main_block_runs_it_with_the_calls_own_inputs(verdicts):
    # token ids from `torch.ones(...).long().to(device)` in a tuple assignment, and a literal step count
    v = verdicts["seq"]
    assert v.verdict == "equivalent", v
    assert "run as the `__main__` block runs it" in v.detail and "vocab = 50, hidden = 8" in v.detail, v
    assert "`tokens` of shape (4, 6)" in v.detail and "`mask` of shape (4, 6)" in v.detail, v


def test_main_block_setup_reading_a_runtime_value_is_untestable(verdicts):
    v = verdicts["seq_argv"]
    assert v.verdict == "untestable", v
    assert "run as the `__main__` block runs it" not in v.detail and "verifier error" not in v.detail, v


def test_unplaced_setup_only_for_names_read_by_placements():
    from gradfix.verify.guard_builds import unplaced_setup

    assert unplaced_setup("m = Net(4).to(device)", "device") == ("m = Net(4)", "Net(4).to(device)")
    assert unplaced_setup("m = Net(n).to(device)", "n") is None  # the build itself reads it
    assert unplaced_setup("m = Net(device).to(device)", "device") is None  # read outside the placement too
    assert unplaced_setup("m = Net(4)", "device") is None


def test_fp32_when_the_fitting_shape_meets_a_dtype_error(verdicts):
    # 16x16 is the only shape the mask fits, and there the forward's own float32 tensor meets fp64 weights; every
    # other shape fails for its size: the check runs in fp32 instead of giving up on the input
    v = verdicts["masked"]
    assert v.verdict == "equivalent", v
    assert "fp32" in v.detail and "Weak check" in v.detail, v


def test_fp32_retry_still_sees_a_hook_that_changes_the_result(verdicts):
    v = verdicts["masked_hooked"]
    assert v.verdict == "changes-behaviour", v
