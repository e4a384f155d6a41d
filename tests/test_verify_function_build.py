"""A GF305 receiver built by a statement that several functions of the file hold (held_builds.function_build): the
first function whose names the statement reads are all its constants builds it; one reading data does not."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

SRC = textwrap.dedent('''
    import json

    import torch
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self, vocab_size, width):
            super().__init__()
            self.emb = nn.Embedding(vocab_size, width)
            self.out = nn.Linear(width, 2)

        def forward(self, ids):
            return self.out(self.emb(ids).mean(1))


    def train():
        vocab_size = 12
        width = 8
        model = Tagger(vocab_size, width)
        return model


    def predict(path, ids):
        vocab_size = len(json.load(open(path)))
        width = 8
        model = Tagger(vocab_size, width)
        with torch.no_grad():
            return model.forward(torch.LongTensor(ids))
''')


def _request(src: str, path: str) -> VerifyRequest:
    old = "model.forward(torch.LongTensor(ids))"
    new = "model(torch.LongTensor(ids))"
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": old, "call_new": new,
                "setup": "model = Tagger(vocab_size, width)"}
    return VerifyRequest(path=path, original=src, rewritten=src.replace(old, new), rule="GF305", line=29,
                         contract=contract, project_root=None)


def test_receiver_built_as_another_function_builds_it(tmp_path, shared_verifier):
    res = shared_verifier.verify_many([_request(SRC, str(tmp_path / "tagger.py"))])[0]
    assert res.verdict == "equivalent", res
    assert "set before it in train()" in res.detail, res


def test_only_a_function_reading_data_stays_untestable(tmp_path, shared_verifier):
    src = SRC.replace("    vocab_size = 12\n", "    vocab_size = len(json.load(open('v.json')))\n")
    assert src != SRC
    res = shared_verifier.verify_many([_request(src, str(tmp_path / "tagger.py"))])[0]
    assert res.verdict == "untestable", res


def test_the_same_factory_called_with_other_names(tmp_path, shared_verifier):
    """train() makes the same call with its own names (`Tagger(n_words, dim)`): the receiver is built that way."""
    src = SRC.replace("    vocab_size = 12\n    width = 8\n    model = Tagger(vocab_size, width)\n",
                      "    n_words = 12\n    dim = 8\n    model = Tagger(n_words, dim)\n")
    assert src != SRC
    res = shared_verifier.verify_many([_request(src, str(tmp_path / "tagger.py"))])[0]
    assert res.verdict == "equivalent", res
    assert "Tagger(n_words, dim)" in res.detail and "as train() builds it" in res.detail, res


def test_another_callee_is_not_the_same_factory(tmp_path, shared_verifier):
    src = SRC.replace("    vocab_size = 12\n    width = 8\n    model = Tagger(vocab_size, width)\n",
                      "    n_words = 12\n    dim = 8\n    model = Tagger.build(n_words, dim)\n")
    assert src != SRC
    res = shared_verifier.verify_many([_request(src, str(tmp_path / "tagger.py"))])[0]
    assert res.verdict == "untestable", res


VOCAB_SRC = SRC.replace("def train():\n    vocab_size = 12\n", '''def build_vocab():
    chars = "ab,cd.ef"
    for p in ",.":
        chars = chars.{method}(p, "")
    vocab = {{}}
    for i, c in enumerate(chars):
        if vocab.get(c):
            continue
        vocab[c] = i + 1
    return vocab


def train():
    vocab_size = len(build_vocab()) + 6
''')


def test_a_helper_with_methods_of_builtin_values_builds_it(tmp_path, shared_verifier):
    """`vocab = build_vocab()` whose helper calls `str.replace` and `dict.get`: evaluated through the guard."""
    src = VOCAB_SRC.format(method="replace")
    res = shared_verifier.verify_many([_request(src, str(tmp_path / "tagger.py"))])[0]
    assert res.verdict == "equivalent", res
    assert "vocab_size = len(build_vocab()) + 6" in res.detail, res
    assert "(methods of builtin values each checked when it ran)" in res.detail, res


def test_a_helper_with_an_unlisted_method_does_not(tmp_path, shared_verifier):
    src = VOCAB_SRC.format(method="translate")  # not one of the listed pure methods of str
    res = shared_verifier.verify_many([_request(src, str(tmp_path / "tagger.py"))])[0]
    assert res.verdict == "untestable", res


HOOKED = textwrap.dedent('''
    import contextlib

    import torch
    import torch.nn as nn


    class Gain(nn.Module):
        def __init__(self, doubled):
            super().__init__()
            self.fc = nn.Linear(6, 6)
            if doubled:
                self.register_forward_hook(lambda mod, args, out: out * 2)

        def forward(self, x):
            return self.fc(x)


    def check_plain():
        doubled = False
        net = Gain(doubled=doubled)
        return net(torch.randn(3, 6))


    def check_doubled():
        with contextlib.nullcontext():
            net = Gain(doubled=True)
            return net.forward(torch.randn(3, 6))
''')


def test_another_functions_call_with_other_constants_is_not_the_build(tmp_path, shared_verifier):
    """`Gain(doubled=True)` is not built as check_plain()'s `Gain(doubled=doubled)` with `doubled = False`: the
    setup's own constant arguments must be the other call's too. Built as it stands, its hook shows."""
    old, new = "net.forward(torch.randn(3, 6))", "net(torch.randn(3, 6))"
    line = next(i for i, t in enumerate(HOOKED.splitlines(), 1) if old in t)
    contract = {"kind": "forward-call", "receiver": "net", "in_class": False, "call_old": old, "call_new": new,
                "setup": "net = Gain(doubled=True)"}
    req = VerifyRequest(path=str(tmp_path / "gain.py"), original=HOOKED, rewritten=HOOKED.replace(old, new),
                        rule="GF305", line=line, contract=contract, project_root=None)
    res = shared_verifier.verify_many([req])[0]
    assert res.verdict == "changes-behaviour", res
    assert "check_plain" not in res.detail, res
