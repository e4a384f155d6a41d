"""Reaching definitions over a flow (analysis/reaching.py): which bindings of a name may be read at a
step, and which `if` chains the path goes around."""

from __future__ import annotations

import libcst as cst
import pytest

from gradfix.analysis import FileIndex
from gradfix.analysis.reaching import chain_tests, reaching, steps_in


def index_of(src: str) -> FileIndex:
    return FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True), src)


BLOCKS = '''
import torch.nn as nn


class Block(nn.Module):
    def forward(self, x, flag):
        out = self.act(x)
        if self.use_drop:
            out = self.drop(out)
        if not flag:
            out = self.proj(out)
        elif self.other:
            out = self.other(out)
        out += x
        h = self.act(x)
        if self.a:
            h = self.f(h)
        else:
            h = self.g(h)
        h += x
        k = self.act(x)
        for layer in self.layers:
            k = layer(k)
        k += x
        m = self.act(x)
        m = self.f(m)
        if self.a:
            m = self.g(m)
        m += x
        return out, h, k, m
'''


@pytest.fixture(scope="module")
def block_flow():
    index = index_of(BLOCKS)
    forward = index.method("Block", "forward")
    return index.flow(forward)


def _step_of_aug(flow, name: str) -> int:
    return next(st.index for st in flow.steps if isinstance(st.node, cst.AugAssign) and st.node.target.value == name)


def _code(node) -> str:
    return cst.Module([]).code_for_node(node).strip()


def test_reaching_through_skipped_ifs(block_flow):
    flow = block_flow
    found = reaching(flow, "out", _step_of_aug(flow, "out"))
    assert [_code(r.binding.value) for r in found] == ["self.other(out)", "self.proj(out)", "self.drop(out)",
                                                       "self.act(x)"]
    assert found[0].skipped == () and found[1].skipped == ()  # two branches of the same chain, each reaching
    assert [_code(t) for t in chain_tests(found[2].skipped[0])] == ["not flag", "self.other"]
    last = found[-1]
    assert len(last.skipped) == 2
    inside = steps_in(flow, last.skipped)
    assert {flow.steps[i].node.value.func.attr.value for i in inside
            if isinstance(flow.steps[i].node, cst.Assign)} == {"drop", "proj", "other"}


def test_reaching_stops_at_else_loops_and_plain_rebinding(block_flow):
    flow = block_flow
    h = reaching(flow, "h", _step_of_aug(flow, "h"))
    assert [_code(r.binding.value) for r in h] == ["self.g(h)", "self.f(h)"]  # the `else` ends the walk
    k = reaching(flow, "k", _step_of_aug(flow, "k"))
    assert k == []  # the loop body's binding may or may not run: no path around it is shown
    m = reaching(flow, "m", _step_of_aug(flow, "m"))
    assert [_code(r.binding.value) for r in m] == ["self.g(m)", "self.f(m)"]
    assert m[1].skipped and all(_code(r.binding.value) != "self.act(x)" for r in m)


def test_only_the_last_binding_of_a_branch(block_flow):
    src = '''
def f(x, a, b):
    y = x
    if a:
        y = x + 1
        if b:
            y = x + 2
    y += 1
'''
    index = index_of(src)
    flow = index.flow(next(n for n in index.module.body if isinstance(n, cst.FunctionDef)))
    found = reaching(flow, "y", _step_of_aug(flow, "y"))
    # `x + 1` reaches only around the nested `if b:`, which `skipped` would not list: not followed
    assert [_code(r.binding.value) for r in found] == ["x + 2", "x"]
    assert [_code(t) for t in chain_tests(found[1].skipped[0])] == ["a"]
