"""Constructor arguments of a block recorded while its enclosing module is built (observed.py): a model that
makes its blocks in a helper method, in a loop, from attributes (`self._stage(width)`), gives no expression for
the block's arguments, but building the model does. Each case asserts the verdict and the detail naming the holder
and the arguments; a block passed objects is refused, `__init__` is restored, and the holder's construction
covers no changed statement for the block's check."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest

torch = pytest.importorskip("torch")
nn = torch.nn

from gradfix.verify.observed import _NotPlain, builders, record  # noqa: E402

NET = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c_in, c_out, scale):
        super().__init__()
        self.fc = nn.Linear(c_in, c_out)
        self.scale = scale

    def forward(self, x):
        y = self.fc(x).sigmoid()
        if x.shape[0] == 7:
            y *= self.scale
        else:
            y = y * self.scale
        return y


class Net(nn.Module):
    def __init__(self, width=4, depth=2):
        super().__init__()
        self.width = width
        self.blocks = nn.Sequential(*self._stage(depth))
        {probe}

    def _stage(self, depth):
        out = []
        for i in range(depth):
            out.append(Block(self.width * (i + 1), self.width * (i + 2), 2.0 + i))
        return out

    def forward(self, x):
        return self.blocks(x)
"""

CHANGE = "            y *= self.scale\n"


def source(probe: str = "", batch: int = 4) -> str:
    text = textwrap.dedent(NET).replace("{probe}", probe)
    return text.replace("x.shape[0] == 7", f"x.shape[0] in (4, 128, 1, {batch})") if batch != 7 else text


def request(root: Path, name: str, text: str, new: str) -> VerifyRequest:
    path = root / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    line = 1 + text.splitlines().index(CHANGE.rstrip("\n"))
    return VerifyRequest(path=str(path), original=text, rewritten=text.replace(CHANGE, CHANGE.replace(
        "y *= self.scale", new)), rule="GF101", line=line, contract={"kind": "equal"}, project_root=None)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("observed")
    objects = source().replace("Block(self.width * (i + 1), self.width * (i + 2), 2.0 + i)",
                               "Block(self.width * (i + 1), self.width * (i + 2), torch.tensor(2.0))")
    # the changed line runs only for a batch of 7, which the checks never use; Net.__init__ runs it once
    covered_by_holder = source("self.blocks[0](torch.randn(7, width))", batch=7)
    reqs = [
        request(root, "good", source(), "y = y * self.scale"),
        request(root, "wrong", source(), "y = y * self.scale + 1"),
        request(root, "objects", objects, "y = y * self.scale"),
        request(root, "holder_ran_it", covered_by_holder, "y = y * self.scale"),
    ]
    return dict(zip(["good", "wrong", "objects", "holder_ran_it"], shared_verifier.verify_many(reqs)))


def test_block_built_with_the_arguments_its_holder_passes(verdicts):
    ok = verdicts["good"]
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output: `*=` breaks its backward
    assert ("Block built with the arguments recorded while building Net (the first Block it makes): "
            "`4, 8, 2.0`.") in ok.detail, ok
    assert verdicts["wrong"].verdict == "failed", verdicts["wrong"]


def test_a_block_passed_objects_is_untestable(verdicts):
    out = verdicts["objects"]
    assert out.verdict == "untestable", out
    assert "constructor of Block needs arguments" in out.detail, out
    assert "building Net: the first Block(...) is passed objects, not plain data" in out.detail, out


def test_the_holders_construction_covers_nothing(verdicts):
    out = verdicts["holder_ran_it"]
    assert out.verdict == "untestable", out
    assert "the changed line did not run on the inputs tried" in out.detail, out


class _Base(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)


class _Own(_Base):
    def __init__(self, n, k=1):
        super().__init__(n)
        self.k = k


class _Inherits(_Base):
    pass


class _Sub(_Own):
    pass


def test_record_takes_the_first_instance_of_exactly_the_class_and_restores_init():
    own_init = _Own.__dict__["__init__"]
    got = record(_Own, lambda: [_Sub(2), _Own(3, k=[1, 2]), _Own(5)])
    assert got == ((3,), {"k": [1, 2]})
    assert _Own.__dict__["__init__"] is own_init
    assert record(_Inherits, lambda: _Inherits(4)) == ((4,), {})
    assert "__init__" not in _Inherits.__dict__
    assert record(_Own, lambda: _Base(2)) is None
    with pytest.raises(_NotPlain):
        record(_Own, lambda: _Own(torch.tensor(3)))
    with pytest.raises(ZeroDivisionError):  # a holder that does not build gives nothing
        record(_Own, lambda: (_Own(2), 1 / 0))
    assert _Own.__dict__["__init__"] is own_init


def test_builders_are_the_classes_whose_methods_call_the_block():
    import ast

    assert builders(ast.parse(source()), "Block") == ["Net"]
    assert builders(ast.parse(source()), "Net") == []
