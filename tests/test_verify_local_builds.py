"""A GF305 receiver built from modules its function built a line before (local_builds.py): `blocks = [Block(w) for _
in range(n)]` then `model = Chain(blocks)`. A factory function in place of the class, or a list changed before the
build, stays untestable."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")


SRC = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.lin = nn.Linear(width, width)

        def forward(self, x):
            return x + torch.tanh(self.lin(x))


    class Chain(nn.Module):
        def __init__(self, blocks):
            super().__init__()
            self.blocks = nn.ModuleList(blocks)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x


    def make_block(width):
        return Block(width)


    def check_chain():
        width = 3
        depth = 2
        blocks = [Block(width) for _ in range(depth)]
        model = Chain(blocks)
        z = torch.randn(5, width)
        return model.forward(z)
''')


def _request(src: str, path: str) -> VerifyRequest:
    old, new = "model.forward(z)", "model(z)"
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": old, "call_new": new,
                "setup": "model = Chain(blocks)"}
    return VerifyRequest(path=path, original=src, rewritten=src.replace(old, new), rule="GF305", line=45,
                         contract=contract, project_root=None)


def _verify(verifier, src: str, tmp_path):
    return verifier.verify_many([_request(src, str(tmp_path / "chain.py"))])[0]


def test_receiver_built_from_a_list_of_modules_the_function_built(tmp_path, shared_verifier):
    res = _verify(shared_verifier, SRC, tmp_path)
    assert res.verdict == "equivalent", res
    assert "blocks = [Block(width)" in res.detail and "check_chain()" in res.detail, res


def test_a_factory_function_is_not_taken_as_a_module_class(tmp_path, shared_verifier):
    src = SRC.replace("blocks = [Block(width) for", "blocks = [make_block(width) for")
    assert src != SRC
    res = _verify(shared_verifier, src, tmp_path)
    assert res.verdict == "untestable", res


def test_a_list_changed_before_the_build_is_not_used(tmp_path, shared_verifier):
    src = SRC.replace("    model = Chain(blocks)\n", "    blocks.append(nn.Identity())\n    model = Chain(blocks)\n")
    assert src != SRC
    res = _verify(shared_verifier, src, tmp_path)
    assert res.verdict == "untestable", res


MASKED = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Masked(nn.Module):
        def __init__(self, width, mask):
            super().__init__()
            self.lin = nn.Linear(width, width)
            self.register_buffer("mask", mask)

        def forward(self, x):
            return self.lin(x * self.mask)


    def check_masked():
        mask = torch.tensor([1., 0., 1.])
        model = Masked(3, mask)
        return model.forward(torch.randn(2, 3))
''')


def test_a_literal_tensor_the_function_made_is_passed_to_the_build(tmp_path, shared_verifier):
    old, new = "model.forward(torch.randn(2, 3))", "model(torch.randn(2, 3))"
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": old, "call_new": new,
                "setup": "model = Masked(3, mask)"}
    req = VerifyRequest(path=str(tmp_path / "masked.py"), original=MASKED, rewritten=MASKED.replace(old, new),
                        rule="GF305", line=19, contract=contract, project_root=None)
    res = shared_verifier.verify_many([req])[0]
    assert res.verdict == "equivalent", res
    assert "mask = torch.tensor(" in res.detail, res


def test_a_placed_local_build_is_built_with_the_check_placing_it(tmp_path, shared_verifier):
    """`Block(width).cuda()`: the class is Block's; the check's cuda->cpu redirect places it."""
    src = SRC.replace("blocks = [Block(width) for", "blocks = [Block(width).cuda() for")
    assert src != SRC
    res = _verify(shared_verifier, src, tmp_path)
    assert res.verdict == "equivalent", res
    assert "Block(width).cuda()" in res.detail, res


def test_a_placed_factory_is_still_refused(tmp_path, shared_verifier):
    src = SRC.replace("blocks = [Block(width) for", "blocks = [make_block(width).cuda() for")
    assert src != SRC
    res = _verify(shared_verifier, src, tmp_path)
    assert res.verdict == "untestable", res
