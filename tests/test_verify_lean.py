"""The GF301 same-object check without loading the file (lean_namespace.py): two calls that read only `torch` and
local names build the same object or not whatever the file imports. A file whose imports fail here (a project's data
pipeline) gets its verdict; a call that reads a module constant still loads the file."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify.lean_namespace import lean_namespace

pytest.importorskip("torch")

TRAINER = """
import torch
from pipeline import loader  # raises at import: loading this file fails here

USE_AMP = True


class Trainer:
    def step(self, model, batch, amp):
        with torch.cuda.amp.autocast(enabled=amp):
            return model(batch)
"""

OLD = "torch.cuda.amp.autocast(enabled=amp)"


def request(root, src: str, old: str, new: str) -> VerifyRequest:
    return VerifyRequest(path=str(root / "trainer.py"), original=src, rewritten=src.replace(old, new), rule="GF301",
                         line=10, contract={"kind": "same-object", "api": "autocast", "device": "cuda", "old": old,
                                            "new": new}, project_root=str(root))


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("lean")
    (root / "pipeline.py").write_text("raise RuntimeError('the data pipeline needs its data set')\n", encoding="utf-8")
    src = textwrap.dedent(TRAINER)
    const = src.replace("autocast(enabled=amp)", "autocast(enabled=USE_AMP)")
    return shared_verifier.verify_many([
        request(root, src, OLD, 'torch.amp.autocast("cuda", enabled=amp)'),
        request(root, src, OLD, 'torch.amp.autocast("cuda", enabled=amp, dtype=torch.bfloat16)'),
        request(root, const, "torch.cuda.amp.autocast(enabled=USE_AMP)", 'torch.amp.autocast("cuda", enabled=USE_AMP)'),
    ])


def test_calls_reading_only_torch_and_locals_need_no_load(verdicts):
    ok, wrong, const = verdicts
    assert ok.verdict == "equivalent", ok
    assert wrong.verdict == "failed" and "fast_dtype" in wrong.detail, wrong
    # USE_AMP is the file's: the file is loaded for it, and its import of the pipeline fails
    assert const.verdict == "untestable" and "module not importable in isolation" in const.detail, const


@pytest.mark.parametrize("src, lean", [
    ("import torch\n", True),
    ("import torch.nn as nn\nimport torch\n", True),
    ("import numpy as torch\n", False),
    ("from mylib import torch\n", False),
    ("import torch\ntorch = None\n", False),
    ("import torch\nfrom utils import *\n", False),
    ("import torch as T\n", False),  # `torch` not bound by the file: the loaded path adds it with a note
    ("import torch\namp = True\n", False),  # the call's `amp` would be the file's constant
    ("import torch\namp = not args.noamp\n", True),  # set by code the verifier does not run: a probe either way
    ("import torch\nfrom flags import amp\n", False),
])
def test_when_the_file_is_not_needed(src, lean):
    tree = ast.parse(src)
    calls = [ast.parse(OLD, mode="eval").body, ast.parse('torch.amp.autocast("cuda", enabled=amp)', mode="eval").body]
    assert (lean_namespace(tree, tree, calls) is not None) is lean
