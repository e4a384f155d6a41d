"""A module with no parameters, buffers or layers (a distance, a similarity) gets plain float inputs instead of
`input shape unknown` (inputs._parameter_free_candidates); what it ran on is said in the detail, and a hook that
`.forward()` skips still shows."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")


SRC = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Gap(nn.Module):
        def __init__(self, hooked=False):
            super().__init__()
            if hooked:
                self.register_forward_hook(lambda mod, args, out: out * 3)

        def forward(self, a, b):
            return (a - b).abs().mean(-1)


    def score(gap, a, b):
        return gap.forward(a, b)
''')


def _verify(verifier, tmp_path, src, setup):
    old, new = "gap.forward(a, b)", "gap(a, b)"
    line = next(i for i, text in enumerate(src.splitlines(), 1) if old in text)
    contract = {"kind": "forward-call", "receiver": "gap", "in_class": False, "call_old": old, "call_new": new,
                "setup": setup}
    (tmp_path / "gap.py").write_text(src)
    req = VerifyRequest(path=str(tmp_path / "gap.py"), original=src, rewritten=src.replace(old, new), rule="GF305",
                        line=line, contract=contract, project_root=str(tmp_path))
    res, = verifier.verify_many([req])
    return res


def test_a_parameter_free_module_runs_on_plain_float_inputs(tmp_path, shared_verifier):
    res = _verify(shared_verifier, tmp_path, SRC, "gap = Gap()")
    assert res.verdict == "equivalent", res
    assert "2 float inputs of shape (4, 16)" in res.detail, res
    assert "Gap has no parameters, buffers or layers" in res.detail, res


def test_the_hook_forward_skips_is_still_seen(tmp_path, shared_verifier):
    res = _verify(shared_verifier, tmp_path, SRC, "gap = Gap(hooked=True)")
    assert res.verdict not in ("equivalent", "untestable"), res


def test_a_shape_none_of_the_plain_inputs_fits_still_needs_a_fixture(tmp_path, shared_verifier):
    src = SRC.replace("return (a - b).abs().mean(-1)", "return (a.view(-1, 7) - b.view(-1, 7)).sum()")
    res = _verify(shared_verifier, tmp_path, src, "gap = Gap()")
    assert res.verdict == "untestable", res
    assert "input shape unknown for gap" in res.detail and "plain float inputs" in res.detail, res


def test_a_module_with_a_parameter_but_no_known_layer_still_needs_a_fixture(tmp_path, shared_verifier):
    src = SRC.replace("super().__init__()", "super().__init__()\n        self.scale = nn.Parameter(torch.ones(16))")
    res = _verify(shared_verifier, tmp_path, src, "gap = Gap()")
    assert res.verdict == "untestable", res
    assert "it has no Conv/Linear/Embedding/RNN layer to infer the input from;" in res.detail, res
