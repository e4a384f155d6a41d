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


@pytest.mark.parametrize("incremental", [False, True], ids=["whole-file", "incremental"])
def test_calls_in_evaluation_order_read_off_the_preorder(incremental):
    """The pre-order slice walk of the training-iteration analysis gives the calls of a
    recursive post-order walk, for every small statement and every compound header."""
    import ast

    from gradfix.analysis.expressions import _post_order_calls, _post_order_calls_walk
    from gradfix.analysis.tree import active, walk
    from gradfix.incremental import IncrementalParser

    sources = [TRICKY + "\nz = f(g(h(1), lambda q: k(q)), m(2)).n(o())\n"]
    sources += [p.read_text() for p in sorted((ROOT / "golden").rglob("*.py"))[::3]]
    checked = 0
    for source in sources:
        if incremental:
            module, children, parents, spans = IncrementalParser().parse(source, ast.parse(source))
            index = FileIndex(cst.MetadataWrapper(module, unsafe_skip_copy=True), source, None,
                              (children, parents, spans))
        else:
            index = FileIndex(cst.MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True), source)
        with active(index.children, index.preorder):
            for node in walk(index.module):
                if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Module)):
                    fast = _post_order_calls(node)
                    assert [id(c) for c in fast] == [id(c) for c in _post_order_calls_walk(node)]
                    checked += len(fast)
    assert checked > 100


# The node classes the analysis tests with `type(node) is cst.X` instead of `isinstance(node, cst.X)` (an
# isinstance against libcst's abstract base classes runs a Python-level __instancecheck__): the two agree only
# while the class has no subclass, in libcst or in gradfix.
COMPARED_BY_TYPE = ("Name", "Attribute", "Arg", "Call", "BinaryOperation", "Lambda", "FunctionDef", "Decorator",
                    "Assign")


@pytest.mark.parametrize("name", COMPARED_BY_TYPE)
def test_classes_compared_by_type_have_no_subclass(name):
    import gradfix.codemods  # noqa: F401  (every module that could define one is loaded)
    import gradfix.verify  # noqa: F401

    assert getattr(cst, name).__subclasses__() == []


def _reference_preorder_spans(root, table):
    """The pre-order and spans by the plain algorithm (one (node, start) pair pushed per child)."""
    order, spans, stack = [], {}, [(root, -1)]
    while stack:
        node, start = stack.pop()
        if start >= 0:
            spans[id(node)] = (order, start, len(order))
            continue
        stack.append((node, len(order)))
        order.append(node)
        stack.extend((k, -1) for k in reversed(table[id(node)]))
    return order, spans


@pytest.mark.parametrize("name,source", sources(), ids=[n for n, _ in sources()])
def test_preorder_spans_match_the_plain_algorithm(name, source):
    from gradfix.analysis.tree import preorder_spans

    module = cst.parse_module(source)
    table, _parents = index_tree(module)
    order, spans = preorder_spans(module, table)
    ref_order, ref_spans = _reference_preorder_spans(module, table)
    assert [id(n) for n in order] == [id(n) for n in ref_order]
    assert {k: (s, e) for k, (_o, s, e) in spans.items()} == {k: (s, e) for k, (_o, s, e) in ref_spans.items()}
    assert all(o is order for o, _s, _e in spans.values())
