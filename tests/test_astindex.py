"""analysis/astindex.py: the one walk of a CPython tree that the project summary, the pre-pass facts,
the rules' conditions and the grad-scope scan share. Its lists must be `ast`'s own walk (less the
context and operator singletons), and what each reader computes from them must not depend on
those singletons being left out: the readers give the same answers on every golden file with the
index that lists them too (then exactly `ast.walk`)."""

from __future__ import annotations

import ast
import copy
import os
import pickle
from pathlib import Path

import pytest

from gradfix.analysis import astindex, inplace_hazards, prepass
from gradfix.analysis.gradscopes import Scope, grad_scopes, scan
from gradfix.analysis.summary import summarise
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
_SINGLETONS = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


def _golden_trees():
    out = []
    for case in sorted(p for p in GOLDEN.rglob("*.py") if not p.name.endswith(".fixed.py")):
        text = case.read_bytes().decode("utf-8")
        try:
            out.append((case, text, ast.parse(text)))
        except SyntaxError:
            continue
    assert len(out) > 300
    return out


def test_walk_children_and_types_are_asts_own_less_the_singletons():
    for case, _text, tree in _golden_trees():
        ix = astindex.of(tree)
        expected = [n for n in ast.walk(tree) if not isinstance(n, _SINGLETONS)]
        assert ix.walk(tree) == expected, case
        assert ix.nodes == expected[1:], case
        for node in expected:
            assert ix.children(node) == [c for c in ast.iter_child_nodes(node) if not isinstance(c, _SINGLETONS)]
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.Assign)):
                assert ix.walk(node) == [n for n in ast.walk(node) if not isinstance(n, _SINGLETONS)]
        assert ix.of_type(ast.Import, ast.ImportFrom) == [n for n in expected[1:]
                                                          if type(n) in (ast.Import, ast.ImportFrom)]
        assert astindex.of(tree) is ix     # made once per tree


def test_a_copy_or_a_pickle_of_the_tree_is_indexed_again():
    tree = ast.parse("def f(x):\n    return x + 1\n")
    ix = astindex.of(tree)
    for other in (copy.deepcopy(tree), pickle.loads(pickle.dumps(tree))):
        again = astindex.of(other)
        assert again is not ix
        assert again.nodes == [n for n in ast.walk(other) if not isinstance(n, _SINGLETONS)][1:]


def test_a_node_the_reader_builds_is_walked_too():
    tree = ast.parse("x = 1\n")
    ix = astindex.of(tree)
    made = ast.Tuple([ast.Name("a", ast.Store()), ast.Name("b", ast.Store())], ast.Store())
    assert [type(n) for n in ix.walk(made)] == [ast.Tuple, ast.Name, ast.Name]


def _scopes(scopes: list[Scope]) -> list[tuple]:
    # the node and the file's facts are references, not readings: GF101's test on them is read instead
    return [tuple(sorted(v) if isinstance(v, (set, frozenset)) else v
                  for v in (getattr(sc, k) for k in Scope.__slots__ if k not in ("node", "facts")))
            + (inplace_hazards.may_show(sc.facts, sc.node, sc.cls_name),) for sc in scopes]


def _readings(engine, case, text, tree) -> tuple:
    facts = prepass.facts_of(tree, text, str(case))
    kept = [r.id for r in engine.rules if r.may_match(facts)]
    scopes = facts.scopes
    reached = grad_scopes(scopes)
    return (summarise(os.path.abspath(case), text, str(GOLDEN), tree), kept, _scopes(scopes),
            [i for i, sc in enumerate(scopes) if id(sc) in reached],
            facts.keywords, facts.methods_on_calls, facts.module_init_stores,
            facts.parameters_into(("optim", "Adam")), _scopes(scan(tree, frozenset({"Parameter"}), True)))


def test_readers_answer_the_same_as_with_the_singletons_walked(monkeypatch):
    engine = Engine(ALL_RULES)
    trees = _golden_trees()
    skipped = [_readings(engine, case, text, tree) for case, text, tree in trees]
    # the index with every field walked: exactly ast.walk, as the readers walked before it
    monkeypatch.setattr(astindex, "_SKIPPED_FIELDS", frozenset())
    monkeypatch.setattr(astindex, "_FIELDS", {})
    compared = 0
    for (case, text, _tree), before in zip(trees, skipped):
        tree = ast.parse(text)
        ix = astindex.of(tree)
        assert ix.walk(tree) == list(ast.walk(tree))
        assert _readings(engine, case, text, tree) == before, case
        compared += 1
    assert compared > 300


@pytest.mark.parametrize("source", ["", "import os\n", "class A:\n    pass\n"])
def test_small_trees(source):
    tree = ast.parse(source)
    assert astindex.of(tree).walk(tree) == [n for n in ast.walk(tree) if not isinstance(n, _SINGLETONS)]
