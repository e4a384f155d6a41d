"""The GF301 same-object check without loading the file (lean_namespace.py): two calls that read only `torch` and
local names build the same object or not whatever the file imports. A file whose imports fail here (a project's data
pipeline) gets its verdict; a call that reads a module constant still loads the file (its failing import stubbed)."""

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
    # USE_AMP is the file's: the file is loaded for it; the pipeline's failing import is stubbed (the unit
    # does not use it) and said so
    assert const.verdict == "equivalent", const
    assert "Stubbed imports the unit does not use: pipeline.loader" in const.detail, const


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
    ("import torch\ndef main():\n    amp = parse()\n", True),  # a local of another function: never the module's
    ("import torch\ndef main():\n    global amp\n    amp = parse()\n", False),
    ("import torch\nif True:\n    amp = False\n", False),  # a block at module level binds in the module
    ("import torch\nclass C:\n    amp = True\n", True),  # a class attribute
    ("import torch\ndef main():\n    from flags import amp\n", False),  # a function's own import of it
])
def test_when_the_file_is_not_needed(src, lean):
    tree = ast.parse(src)
    calls = [ast.parse(OLD, mode="eval").body, ast.parse('torch.amp.autocast("cuda", enabled=amp)', mode="eval").body]
    assert (lean_namespace(tree, tree, calls) is not None) is lean


# --------------------------------------------------------------------------- a name imported from torch alone

FROM_IMPORT = """
import torch
from torch.cuda.amp import autocast, GradScaler
from pipeline import loader  # raises at import: loading this file fails here


def train(net, batch, hps):
    scaler = GradScaler(enabled=hps.fp16)
    with autocast(enabled=hps.fp16):
        return scaler, net(batch)
"""


def test_a_name_imported_from_torch_needs_no_load(tmp_path, shared_verifier):
    """`autocast` bound only by `from torch.cuda.amp import autocast` is that object in both loaded versions: the
    check gets its verdict although the file's other import fails, and still refuses a rewrite that changes it."""
    (tmp_path / "pipeline.py").write_text("raise RuntimeError('needs a compiled extension')\n", encoding="utf-8")
    src = textwrap.dedent(FROM_IMPORT)
    old = "autocast(enabled=hps.fp16)"
    ok, wrong = shared_verifier.verify_many([
        request(tmp_path, src, old, 'torch.autocast("cuda", enabled=hps.fp16)'),
        request(tmp_path, src, old, 'torch.autocast("cuda", enabled=hps.fp16, dtype=torch.bfloat16)'),
    ])
    assert ok.verdict == "equivalent", ok
    assert wrong.verdict == "failed" and "fast_dtype" in wrong.detail, wrong


@pytest.mark.parametrize("src, lean", [
    ("import torch\nfrom torch.cuda.amp import autocast\n", "bound"),
    ("import torch\nfrom torch.cuda.amp import GradScaler as autocast\n", "bound"),  # what loading binds it to
    # bound by nothing: the check sees a name no version defines (untestable there), as when loaded
    ("import torch\nfrom torch.cuda.amp import autocast as ac\n", "free"),
    ("import torch\nfrom mylib.amp import autocast\n", None),  # not torch's
    ("import torch\nfrom torch.cuda.amp import autocast\nautocast = None\n", None),
    ("import torch\nfrom torch.cuda.amp import autocast\nfrom torch.amp import autocast\n", None),
    ("import torch\nfrom torch.cuda.amp import autocast\ndef f(autocast):\n    pass\n", None),
    ("import torch\ntry:\n    from torch.cuda.amp import autocast\nexcept ImportError:\n    pass\n", None),
    ("import torch\nfrom torch.cuda.amp import autocast\ndef f():\n    from apex import autocast\n", None),
    ("import torch\nfrom torch.cuda.amp import no_such_name as autocast\n", None),  # not in torch: load as before
])
def test_when_a_name_imported_from_torch_is_enough(src, lean):
    import importlib

    tree = ast.parse(src)
    calls = [ast.parse("autocast(enabled=amp)", mode="eval").body,
             ast.parse('torch.amp.autocast("cuda", enabled=amp)', mode="eval").body]
    ns = lean_namespace(tree, tree, calls)
    if lean is None:
        assert ns is None
    elif lean == "free":
        assert ns is not None and "autocast" not in ns
    else:
        st = next(s for s in tree.body if isinstance(s, ast.ImportFrom))
        assert ns is not None and ns["autocast"] is getattr(importlib.import_module(st.module), st.names[0].name)


def test_a_name_imported_from_torch_in_one_version_only_loads():
    old = ast.parse("import torch\nfrom torch.cuda.amp import autocast\n")
    new = ast.parse("import torch\n")
    calls = [ast.parse("autocast(enabled=amp)", mode="eval").body,
             ast.parse('torch.amp.autocast("cuda", enabled=amp)', mode="eval").body]
    assert lean_namespace(old, new, calls) is None
