"""Calls of a project file that does not parse as a whole (salvage.py): a script whose training functions are
Python 2 (`x.cuda(async=True)`) but whose `__main__` block builds the model from constants still gives that call.
Each case asserts what is dropped, that an error outside a top-level definition refuses the file, and that a call
whose arguments read a word of the dropped text is not used."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify.call_sites import project_sites
from gradfix.verify.salvage import salvage

pytest.importorskip("torch")

NET = """
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        y = self.fc(x).sigmoid()
        y *= 2.0
        return y
"""

TRAIN = """
import torch
import net as models

WIDTH = 6


def evaluate(model, data):
    return model(data)


@torch.no_grad()
def train(model, batches):
    for x in batches:
        x = x.cuda(async=True)
        print "loss", model(x).sum()


def train_kd(model, teacher):
    try:
        teacher(model)
    except Exception, e:
        raise


if __name__ == "__main__":
    model = models.Head(WIDTH, classes=3)
    train(model, [])
"""


def dedent(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def test_unparseable_definitions_are_dropped_and_the_rest_kept():
    part = salvage(dedent(TRAIN))
    assert part is not None
    assert part.dropped == ["train", "train_kd"]
    assert "parsed without train, train_kd, which do not parse" == part.note
    names = {n.name for n in part.tree.body if isinstance(n, ast.FunctionDef)}
    assert names == {"evaluate"}  # the decorator went with its definition; the parsing one stays
    call = next(n for n in ast.walk(part.tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "models.Head")
    assert call.lineno == 1 + dedent(TRAIN).splitlines().index("    model = models.Head(WIDTH, classes=3)")
    assert part.touches({"batches"}) and part.touches({"teacher"}) and not part.touches({"WIDTH"})
    # through the module-level statements that bind a name: `SIZE = teacher * 2` reads a word of the dropped text
    indirect = salvage(dedent(TRAIN).replace("WIDTH = 6", "teacher = 3\nSIZE = teacher * 2"))
    assert indirect.touches({"SIZE"}) and not indirect.touches({"evaluate"})


@pytest.mark.parametrize("text", [
    "import os\n\ndef f(x):\n    return x\n",  # parses: nothing to salvage
    'import os\nprint "module level"\n\ndef f():\n    pass\n',  # an error outside a definition
    "def f():\n    x.cuda(async=True)\n\nf = 3\n",  # the dropped name is bound again: order would matter
    'def f():\n    s = """\nx\n"""\n    y.cuda(async=True)\n',  # a column-0 string inside the body: refused
])
def test_files_that_cannot_be_salvaged(text):
    assert salvage(text) is None


def test_project_sites_reads_a_salvaged_script(tmp_path):
    (tmp_path / "net.py").write_text(dedent(NET), encoding="utf-8")
    (tmp_path / "train.py").write_text(dedent(TRAIN), encoding="utf-8")
    src = (tmp_path / "net.py").read_text(encoding="utf-8")
    (site,) = project_sites(str(tmp_path / "net.py"), ast.parse(src), "Head", str(tmp_path), src)
    assert site.file == "train.py (parsed without train, train_kd, which do not parse)"
    assert site.values(None) == ((6,), {"classes": 3})
    # an argument reading a name that the dropped text mentions (it may rebind it when called) is not used
    (tmp_path / "train.py").write_text(dedent(TRAIN).replace("for x in batches:", "global WIDTH\n    for x in batches:"),
                                       encoding="utf-8")
    assert project_sites(str(tmp_path / "net.py"), ast.parse(src), "Head", str(tmp_path), src) == []


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("salvaged")
    (root / "net.py").write_text(dedent(NET), encoding="utf-8")
    (root / "train.py").write_text(dedent(TRAIN), encoding="utf-8")
    src = (root / "net.py").read_text(encoding="utf-8")
    line = 1 + src.splitlines().index("        y *= 2.0")
    reqs = [VerifyRequest(path=str(root / "net.py"), original=src, rewritten=src.replace("y *= 2.0", new),
                          rule="GF101", line=line, contract={"kind": "equal"}, project_root=str(root))
            for new in ("y = y * 2.0", "y = y * 2.0 + 1")]
    return shared_verifier.verify_many(reqs)


def test_module_built_by_the_salvaged_call(verdicts):
    ok, wrong = verdicts
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output: the in-place `*=` breaks backward
    assert ("Head built as `models.Head(WIDTH, classes=3)` (the call at train.py (parsed without train, train_kd, "
            "which do not parse), line 26)") in ok.detail, ok
    assert wrong.verdict == "failed", wrong
