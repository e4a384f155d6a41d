"""The fast paths in the analysis must agree with libcst exactly: children in source
order, and positions computed per top-level statement."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import PositionProvider

from gradfix.analysis import FileIndex
from gradfix.analysis.tree import index_tree

ROOT = Path(__file__).resolve().parent.parent
TRICKY = '''#!/usr/bin/env python
# header comment

"""Docstring."""
import torch; import torch.nn as nn  # two statements on one line


# comment before a decorator
@torch.no_grad()
# comment between decorators
@staticmethod

def f(x):
    return x


class A(nn.Module):
    def forward(self, x):
        y = (x
             + 1)
        if y:  # nested
            y = y * 2; y /= 3  # two on a line
        elif x:
            pass
        else:
            y = "é" + "x"
        try:
            w = 1
        except ValueError as e:
            w = 2
        finally:
            w = 3
        return y
if True: z = 1
'''


def sources():
    files = [p for p in sorted((ROOT / "golden").rglob("*.py"))]
    files += sorted(Path(cst.__file__).parent.joinpath("_nodes").glob("*.py"))
    return [("tricky", TRICKY), ("tricky-crlf", TRICKY.replace("\n", "\r\n"))] + [(p.name, p.read_text()) for p in files]


@pytest.mark.parametrize("name,source", sources(), ids=[n for n, _ in sources()])
def test_children_match_libcst(name, source):
    module = cst.parse_module(source)
    table, parents = index_tree(module)
    stack = [module]
    while stack:
        node = stack.pop()
        expected = list(node.children)
        assert [id(c) for c in table[id(node)]] == [id(c) for c in expected], type(node).__name__
        for child in expected:
            assert parents[child] is node
        stack.extend(expected)


@pytest.mark.parametrize("name,source", sources()[:40], ids=[n for n, _ in sources()[:40]])
def test_statement_positions_match_whole_file_positions(name, source):
    module = cst.parse_module(source)
    index = FileIndex(cst.MetadataWrapper(module, unsafe_skip_copy=True), source)
    full = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert index._statement_starts is not None
    for stmt in module.body:
        stack = [stmt]
        while stack:
            node = stack.pop()
            assert index.position(node) == full[node], (type(node).__name__, full[node])
            stack.extend(node.children)


@pytest.mark.parametrize("name,source", sources()[:30], ids=[n for n, _ in sources()[:30]])
def test_walk_slices_match_a_plain_walk(name, source):
    from gradfix.analysis.tree import _walk, active, walk

    module = cst.parse_module(source)
    index = FileIndex(cst.MetadataWrapper(module, unsafe_skip_copy=True), source)
    with active(index.children, index.preorder):
        nodes = list(walk(module))
        for node in nodes:
            assert [id(n) for n in walk(node)] == [id(n) for n in _walk(node)]
