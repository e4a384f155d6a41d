"""Methods of builtin values in a file's constants (pure_methods.py): a vocabulary built at module level from a
literal corpus (`sentence.lower().split()`, `vocabulary.add("<unk>")`, `vocab_size = len(word_to_ix)`) is
evaluated when the verifier loads the file, each method call through a guard that checks the receiver's exact
type when it runs; a constant that code the verifier does not run may mutate is not evaluated."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify import source as S
from gradfix.verify.runtime import exec_module

pytest.importorskip("torch")

VOCAB = """
corpus = ["We always come to Paris", "The capital of Turkey is Ankara"]
def preprocess(sentence):
    return sentence.lower().split()
train = [preprocess(s) for s in corpus]
vocabulary = set(w for s in train for w in s)
vocabulary
vocabulary.add("<unk>")
vocabulary.add("<pad>")
word_to_ix = {w: i for i, w in enumerate(sorted(vocabulary))}
vocab_size = len(word_to_ix)
"""


def load(src: str):
    tree = ast.parse(textwrap.dedent(src))
    return exec_module(S.strip_module(tree).tree, "old", "<test>")


def computed(src: str, methods: bool = True) -> list[str]:
    _k, comp, _d = S.classify_module(ast.parse(textwrap.dedent(src)), methods=methods)
    return [ast.unparse(s) for s in comp]


def test_a_vocabulary_from_a_literal_corpus_is_evaluated_as_the_file_computes_it():
    assert computed(VOCAB)[-1] == "vocab_size = len(word_to_ix)"
    assert "vocabulary.add('<unk>')" in computed(VOCAB)
    m = load(VOCAB)
    assert m.vocab_size == 13  # 11 words of the corpus and the two added tokens
    assert {"<unk>", "<pad>", "paris", "ankara"} <= m.vocabulary
    # without methods (what call-site expressions and other files' constants use) none of it is evaluated
    assert "vocab_size = len(word_to_ix)" not in computed(VOCAB, methods=False)


def test_the_files_own_function_is_left_as_written():
    m = load(VOCAB)

    class Shout:
        def lower(self):
            return self

        def split(self):
            return ["x"]

    # the code under test may call it with any object: only the copy the constants call is guarded
    assert m.preprocess(Shout()) == ["x"]
    assert m.preprocess("A B") == ["a", "b"]


def test_the_guard_refuses_other_types_and_methods():
    m = load("""
        from enum import Enum
        LOG = []
        class Color(Enum):
            RED = "r"
            def lower(self):
                LOG.append("ran")
                return "red"
        low = Color("r").lower()
        ok = "AB".lower()
    """)
    assert m.ok == "ab"
    assert not hasattr(m, "low") and m.LOG == []  # an enum member's own method never runs
    guard = vars(m)["__gf_method"]

    class MyStr(str):
        def lower(self):
            raise AssertionError("a subclass's method ran")

    with pytest.raises(TypeError):
        guard(MyStr("A"), "lower", False)
    with pytest.raises(TypeError):
        guard([1], "append", False, 2)  # a mutating method in an expression
    with pytest.raises(TypeError):
        guard("a", "lower", True)  # not a mutating method of str
    assert guard([1], "append", True, 2) is None


def test_a_constant_mutated_by_code_not_run_is_not_evaluated():
    src = """
        base = list(range(3))
        alias = base
        other = list(range(2))
        alias[0] = int(input())
        label = str(other)
    """
    comp = computed(src)
    # `alias[0] = ...` does not run: neither alias nor base (the same list) may be evaluated
    assert comp == ["other = list(range(2))", "label = str(other)"]
    m = load(src)
    assert not hasattr(m, "base") and not hasattr(m, "alias") and m.label == "[0, 1]"
    comp = computed("""
        sizes = list(range(3))
        sizes.sort(key=len)
        n = len(sizes)
    """)
    assert comp == []  # `sort(key=...)` is not a listed mutation: sizes and n stay unset


def test_poisoning_follows_the_files_order():
    comp = computed("""
        import torch
        data = torch.tensor([1.0, 2.0])
        data.sum()
        data = list(zip([1, 2], [3, 4]))
        n = 3
        n = len(torch.ones(2))
        m = n * 2
        k = len(data)
    """)
    # `data.sum()` is on the tensor, not on the later list; `m` would read n = 3, which the file rebinds first
    assert comp == ["data = list(zip([1, 2], [3, 4]))", "k = len(data)"]


def test_a_failed_mutation_leaves_its_receiver_unset():
    m = load("""
        words = sorted(["b", "a"])
        words.add("c")
        n = len(words)
        items = list(range(2))
        items.remove(5)
        kept = list(range(2))
        kept.append(2)
    """)
    # list has no add (the guard refuses it); remove of a missing item raises: the file never gets past either
    assert not hasattr(m, "words") and not hasattr(m, "n") and not hasattr(m, "items")
    assert m.kept == [0, 1, 2]


MODEL = """
import torch.nn as nn

corpus = ["a b c", "b c d e"]
def tokens(line):
    return line.strip().split(" ")
vocab = sorted(set(w for line in corpus for w in tokens(line)))
vocab.append("<unk>")
vocab_size = len(vocab)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(vocab_size, 3)

    def forward(self, x):
        x = self.fc(x).sigmoid()
        x *= 2.0
        return x
"""


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("vocab")
    (root / "model.py").write_text(MODEL, encoding="utf-8")
    line = 1 + MODEL.splitlines().index("        x *= 2.0")

    def req(new: str) -> VerifyRequest:
        return VerifyRequest(path=str(root / "model.py"), original=MODEL, rewritten=MODEL.replace("x *= 2.0", new),
                             rule="GF101", line=line, contract={"kind": "equal"}, project_root=str(root))

    return shared_verifier.verify_many([req("x = x * 2.0"), req("x = x * 2.5")])


def test_a_model_sized_by_a_vocabulary_gets_a_verdict(verdicts):
    fixed, wrong = verdicts
    assert fixed.verdict == "fixes-crash", fixed  # sigmoid saves its output: `*=` breaks its backward
    assert wrong.verdict == "failed", wrong
    # the detail says which module-level statements ran through the guard
    assert "evaluated with methods of builtin values" in fixed.detail and "vocab (line 7)" in fixed.detail, fixed
