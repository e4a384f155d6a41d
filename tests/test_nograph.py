"""Values shown to hold no autograd graph (analysis/numbers.py): integer and boolean results, what follows
only from them, and the helpers of the file that return them."""

from __future__ import annotations

import libcst as cst
import pytest

from gradfix.analysis import FileIndex
from gradfix.analysis.numbers import carries_no_graph, no_graph_from, returns_no_graph

HEADER = '''
import numpy as np
import torch


def hits(scores, labels):
    guesses = torch.max(scores, 1)[1]
    same = torch.eq(guesses, labels)
    return torch.mean(same.float())


def soft_hits(scores, labels):
    return (scores.softmax(1) * labels).sum()


def either(scores, labels, hard):
    if hard:
        return (scores.argmax(1) == labels).float().mean()
    return scores.mean()
'''


def index_of(src: str) -> FileIndex:
    return FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True), src)


@pytest.fixture(scope="module")
def index():
    return index_of(HEADER)


@pytest.mark.parametrize("expr", [
    "out.argmax(1)", "torch.argmin(out, dim=0)", "out == y", "(out > 0.5).float().mean()", "torch.eq(a, b)",
    "out.long()", "torch.max(out, 1)[1]", "out.max(dim=1)[1]", "out.max(-1).indices", "out.topk(5)[1]",
    "torch.topk(out, 3, dim=1).indices", "out.sort(descending=True)[1]", "torch.sum(out.argmax(1) == y)",
    "out.argmax(1).eq(y).sum().float() / 8", "out.to(torch.long)", "out.detach()", "out.data", "hits(out, y)",
    "hits(out, y) * 2 + 1", "~(out > 0)", "not out", "out.eq(y).double().cpu().numpy()",
])
def test_graph_free_values(index, expr):
    assert carries_no_graph(index, cst.parse_expression(expr))


@pytest.mark.parametrize("expr", [
    "out", "out.float()", "torch.max(out, 1)[0]", "out.max(1).values", "torch.max(out, other)[1]",
    "out.round()", "out.sign()", "torch.unique(out)", "np.sort(out)[1]", "out.argmax(1) * w",
    "soft_hits(out, y)", "either(out, y, True)", "out.type(torch.FloatTensor)", "torch.where(out > 0, out, y)",
])
def test_values_that_may_hold_a_graph(index, expr):
    assert not carries_no_graph(index, cst.parse_expression(expr))


def test_helper_returns(index):
    assert returns_no_graph(index, "hits")
    assert not returns_no_graph(index, "soft_hits")
    assert not returns_no_graph(index, "either")  # one `return` keeps the graph
    assert not returns_no_graph(index, "missing")


def test_no_graph_from_reads_only_the_sources(index):
    value = cst.parse_expression("hits(out, y) * n")
    assert no_graph_from(index, value, {"out"})          # `n` is unknown, but it is not the model output
    assert not no_graph_from(index, cst.parse_expression("out.sum() * n"), {"out"})
    assert not no_graph_from(index, cst.parse_expression("hits(out, y) * out.mean()"), {"out"})
    assert no_graph_from(index, cst.parse_expression("-(out == y).sum() + count"), {"out"})


def test_names_resolved_through_bindings(index):
    values = {"pred": [cst.parse_expression("out.argmax(1)")], "mixed": [cst.parse_expression("out.argmax(1)"),
                                                                          cst.parse_expression("out * 2")]}
    names = lambda name: values.get(name.value)  # noqa: E731
    assert carries_no_graph(index, cst.parse_expression("(pred == y).sum()"), names)
    assert carries_no_graph(index, cst.parse_expression("pred.float().mean()"), names)
    assert not carries_no_graph(index, cst.parse_expression("mixed.float()"), names)
    assert not carries_no_graph(index, cst.parse_expression("unbound.float()"), names)


def test_ops_of_graph_free_inputs_and_foreign_accuracy_helpers():
    index = index_of(HEADER + '''
import utils
from project import metrics


def binary_acc(pred, y):
    tags = torch.round(torch.sigmoid(pred))
    acc = (tags == y).sum().float() / y.shape[0]
    return torch.round(acc * 100)


def precision_at(pred, y):
    return pred.sum()
''')
    assert returns_no_graph(index, "binary_acc")  # round of a graph-free count holds none
    for expr in ("accuracy(out, y)", "get_accuracy(out, y) * 2", "count_correct(out, y)", "top1_acc(out, y)",
                 "calcAccuracy(out, y)", "numCorrect(out, y) / 8", "utils.accuracy(out, y)", "metrics.topAcc(out, y)",
                 "(out == y).sum(dim=0).round()", "torch.clamp((out > 0).float(), 0, 1)",
                 "(out.argmax(1) == y).to(torch.float32).mean()"):
        assert carries_no_graph(index, cst.parse_expression(expr)), expr
    for expr in ("precision_at(out, y)", "hits(out, y).mul(out)", "torch.clamp(out, 0, 1)", "accumulate(out)",
                 "getAccumulated(out)", "numCorrections(out)", "self.accuracy(out, y)", "net.accuracy(out, y)",
                 "utils.score(out, y)",
                 "torch.randn(3, requires_grad=True)", "(out > 0).float().add_(out)"):
        assert not carries_no_graph(index, cst.parse_expression(expr)), expr
