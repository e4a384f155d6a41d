"""A receiver built by `A if <a condition the verifier cannot evaluate> else B` is checked in each branch
(branch_builds.py): definitive only when every branch is, and a branch that differs is not hidden by the other."""

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


    def score(a, b, kind):
        dist = {build}
        return dist.forward(a, b)
''')


def _verify(verifier, tmp_path, build):
    src = SRC.replace("{build}", build)
    old, new = "dist.forward(a, b)", "dist(a, b)"
    line = next(i for i, text in enumerate(src.splitlines(), 1) if old in text)
    contract = {"kind": "forward-call", "receiver": "dist", "in_class": False, "call_old": old, "call_new": new,
                "setup": f"dist = {build}"}
    (tmp_path / "dist.py").write_text(src)
    req = VerifyRequest(path=str(tmp_path / "dist.py"), original=src, rewritten=src.replace(old, new), rule="GF305",
                        line=line, contract=contract, project_root=str(tmp_path))
    res, = verifier.verify_many([req])
    return res


def test_each_branch_of_an_unknown_condition_is_checked(tmp_path, shared_verifier):
    res = _verify(shared_verifier, tmp_path, 'nn.CosineSimilarity(dim=1) if kind == "cos" else nn.PairwiseDistance(2)')
    assert res.verdict == "equivalent", res
    assert "whose condition (`kind == 'cos'`) the verifier cannot evaluate" in res.detail, res
    assert "nn.CosineSimilarity(dim=1)" in res.detail and "nn.PairwiseDistance(2)" in res.detail, res


def test_a_branch_where_the_rewrite_differs_is_not_hidden(tmp_path, shared_verifier):
    res = _verify(shared_verifier, tmp_path, 'Gap() if kind == "plain" else Gap(hooked=True)')
    assert res.verdict not in ("equivalent", "untestable"), res
    assert "the branches differ" in res.detail, res


def test_a_branch_that_cannot_be_checked_leaves_it_untestable(tmp_path, shared_verifier):
    # a parameter, no layer to shape from
    res = _verify(shared_verifier, tmp_path, 'Gap() if kind == "plain" else nn.PReLU()')
    assert res.verdict == "untestable", res
    assert "not every branch could be" in res.detail and "input shape unknown for dist" in res.detail, res


def test_a_name_a_branch_reads_is_not_split(tmp_path, shared_verifier):
    res = _verify(shared_verifier, tmp_path, 'nn.PairwiseDistance(kind) if kind else nn.PairwiseDistance(2)')
    assert res.verdict == "untestable", res
    assert "cannot evaluate" not in res.detail, res
