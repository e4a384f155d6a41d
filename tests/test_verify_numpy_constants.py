"""numpy array constructors in a file's constants (source.NUMPY_CALLS): a config dict literal such as `{"hidden":
np.array([1, 2, 1]) * 8}` is a computed constant, so the model that reads it, and a script that imports it from the
model's file, load; any other numpy call (a file read, the random generator) is still skipped."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify import source as S

pytest.importorskip("torch")

MODEL = """
import numpy as np
import torch.nn as nn

config = {
    "hidden": np.array([1, 2, 1]) * 4,
    "dtype": np.float32,
}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        sizes = [int(h) for h in config["hidden"]]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip([4] + sizes, sizes + [2]))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).sigmoid()
        x *= 2.0
        return x
"""


def classified(src: str) -> tuple[list[str], list[str]]:
    kept, computed, dropped = S.classify_module(ast.parse(textwrap.dedent(src)))
    return [ast.unparse(s) for s in computed], [ast.unparse(s) for s in dropped]


def test_numpy_constructors_on_constants_are_computed_constants():
    run, skipped = classified("""
        import numpy as np
        SIZES = np.arange(4) * 2
        GRID = np.linspace(0, 1, num=5, dtype=np.float64)
        noise = np.random.rand(3)
        table = np.load("table.npy")
        scaled = np.array(noise) * 2
    """)
    assert run == ["SIZES = np.arange(4) * 2", "GRID = np.linspace(0, 1, num=5, dtype=np.float64)"]
    assert skipped == ["noise = np.random.rand(3)", "table = np.load('table.npy')", "scaled = np.array(noise) * 2"]
    # a name that is not numpy's (rebound, or numpy imported as a standard module's name) is not trusted
    _run, skipped = classified("import numpy as np\nnp = make()\nA = np.array([1])\n")
    assert "A = np.array([1])" in skipped
    _run, skipped = classified("import numpy as math\nA = math.array([1])\n")
    assert skipped == ["A = math.array([1])"]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("npconfig")
    (root / "model.py").write_text(MODEL, encoding="utf-8")
    src = MODEL
    line = 1 + src.splitlines().index("        x *= 2.0")

    def req(new: str) -> VerifyRequest:
        return VerifyRequest(path=str(root / "model.py"), original=src, rewritten=src.replace("x *= 2.0", new),
                             rule="GF101", line=line, contract={"kind": "equal"}, project_root=str(root))

    return shared_verifier.verify_many([req("x = x * 2.0"), req("x = x * 2.5")])


def test_a_model_built_from_a_numpy_config_gets_a_verdict(verdicts):
    fixed, wrong = verdicts
    assert fixed.verdict == "fixes-crash", fixed  # sigmoid saves its output: `*=` breaks its backward
    assert wrong.verdict == "failed", wrong
