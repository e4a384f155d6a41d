"""Pure helpers that fill objects they build themselves (fresh_objects.py): a vocabulary made by a loop over a
literal alphabet (`vocab = {}; for i, c in enumerate(chars): vocab[c] = i + 1`), a list grown by `append`, a counter
grown by `+=` are computed when the verifier loads the file; a helper that changes an object it was given, or an
object stored in one it made, is not."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify import source as S

pytest.importorskip("torch")

SRC = '''
chars = "abcd"
SHARED = [1]

def build_vocab():
    vocab = {}
    for index, char in enumerate(chars):
        vocab[char] = index + 1
    vocab["unk"] = len(vocab) + 1
    return vocab

def evens(n):
    out = []
    total = 0
    for i in range(n):
        if i % 2:
            continue
        out.append(i)
        total += i
    return out, total

def grows_its_argument(xs):
    for i in range(3):
        xs.append(i)
    return xs

def through_an_alias(xs):
    out = xs
    out.append(1)
    return out

def into_a_stored_object(d):
    out = {}
    out["a"] = d
    out["a"]["b"] = 1
    return out

def loops_over_what_it_fills():
    out = [0]
    for x in out:
        out.append(x)
    return out

def rebinds_from_a_loop():
    out = []
    for out in [SHARED]:
        out.append(2)
    return out

VOCAB = build_vocab()
EVENS = evens(5)
A = grows_its_argument(SHARED)
B = through_an_alias(SHARED)
C = into_a_stored_object({})
D = loops_over_what_it_fills()
E = rebinds_from_a_loop()
'''


def load(src: str) -> tuple[dict, set]:
    st = S.strip_module(ast.parse(textwrap.dedent(src)))
    ns: dict = {}
    exec(compile(st.tree, "<stripped>", "exec"), ns)
    return ns, st.dropped_names


def test_helpers_that_fill_their_own_objects_are_computed():
    ns, _ = load(SRC)
    assert ns["VOCAB"] == {"a": 1, "b": 2, "c": 3, "d": 4, "unk": 5}
    assert ns["EVENS"] == ([0, 2, 4], 6)


def test_helpers_that_change_other_objects_stay_dropped():
    ns, _ = load(SRC)
    for name in "ABCDE":
        assert name not in ns, name
    assert ns["SHARED"] == [1]  # nothing ran that appends to the module's own list


def test_a_local_constant_built_by_such_a_helper_sizes_a_model():
    """call_sites.local_constants: `vocab = build_vocab()` in main() is a constant of main() now."""
    from gradfix.verify.call_sites import local_constants

    tree = ast.parse(textwrap.dedent(SRC + '''
def main():
    dim = 8
    vocab = build_vocab()
    model = make(vocab, dim)
'''))
    main = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "main"][0]
    got = [n for n, _v in local_constants(main, S.evaluable(tree), main.body[-1].lineno)]
    assert got == ["dim", "vocab"]
