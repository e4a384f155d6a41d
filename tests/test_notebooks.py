"""Notebooks (.ipynb) through check, apply, apply --diff, apply -i: positions, masking, bytes kept.

The fixture, tests/notebooks/train.ipynb, is written the way nbformat writes (indent 1,
sorted keys, final newline) and holds magics, shell escapes, a `%%time` cell, a `%%bash`
cell, outputs and execution counts, and two hazards: GF101 in cell 3, GF208 in cell 5.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradfix.cli.main import main
from gradfix.engine import Change, Decision
from gradfix.model import Finding, Fix, Safety, Span
from gradfix.magics import mask
from gradfix.notebook import Notebook, NotebookError, guard

FIXTURE = Path(__file__).resolve().parent / "notebooks" / "train.ipynb"
RAW = FIXTURE.read_bytes()
OLD_101 = b'"        out.div_(out.pow(2).sum(1, keepdim=True).sqrt())  # unit rows\\n",'
NEW_101 = b'"        out = out.div(out.pow(2).sum(1, keepdim=True).sqrt())  # unit rows\\n",'
OLD_208 = b'"    total += loss"\n'
NEW_208 = b'"    total += loss.item()"\n'
DIFF = """\
--- a/train.ipynb:cell 3
+++ b/train.ipynb:cell 3
@@ -5,5 +5,5 @@
 
     def forward(self, x):
         out = self.lin(x)
-        out.div_(out.pow(2).sum(1, keepdim=True).sqrt())  # unit rows
+        out = out.div(out.pow(2).sum(1, keepdim=True).sqrt())  # unit rows
         return out
--- a/train.ipynb:cell 5
+++ b/train.ipynb:cell 5
@@ -8,4 +8,4 @@
     !echo step
     loss.backward()
     opt.step()
-    total += loss
+    total += loss.item()
"""
NO_VERIFY = ["--no-verify", "--unsafe-fixes"]


def run(args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def nbdir(tmp_path):
    shutil.copy(FIXTURE, tmp_path / "train.ipynb")
    return tmp_path


# -- the module the engine sees ------------------------------------------------------------


def test_module_masks_every_magic_and_maps_back_unchanged():
    nb = Notebook.read(str(FIXTURE))
    ast.parse(nb.text)                       # Python, magics and all
    for line in nb.text.splitlines():
        assert not line.lstrip().startswith(("%", "!")) and not line.rstrip().endswith("?")
    assert "echo not python" not in nb.text  # the %%bash cell is not Python
    assert [c.number for c in nb.cells] == [2, 3, 5, 6]
    assert nb.locate(nb.text.splitlines().index("    total += loss") + 1) == (5, 11)
    assert nb.render(nb.split(nb.text)).encode() == RAW


@pytest.mark.parametrize("source, masked", [
    ("%matplotlib inline\nimport torch", ["%matplotlib inline"]),
    ("!pip install a \\\n    b\nx = 1", ["!pip install a \\", "    b"]),
    ("for f in fs:\n    !echo $f\n", ["    !echo $f"]),
    ("files = !ls\nout = %sx date\nmodel?\n??torch.nn\n", ["files = !ls", "out = %sx date", "model?", "??torch.nn"]),
    ("%%time\nx = 1\n", ["%%time"]),
    # Python that only looks like IPython syntax stays Python
    ("y = (a\n     % b)\nz = x != 1  # why?\n", []),
    ('s = """\n!not a shell line\n%not a magic\n"""\n', []),
    ('q = """why?\n!still text\n"""\n', []),
    ("t = [1,\n  2] ; u = 3\n", []),
    # automagic: a one-line cell whose first word is a line magic (IPython runs `%pip install torchviz`)
    ("pip install torchviz\n", ["pip install torchviz"]),
    ("\n  conda install -y scipy  # once", ["  conda install -y scipy  # once"]),
    ("ls", []),                          # valid Python: IPython's magic only if no variable `ls` exists
    ("pip = 3\n", []),
])
def test_masking(source, masked):
    lines, originals = mask(source)
    assert originals == masked
    assert len(lines) == len(source.splitlines())
    ast.parse("".join(lines))


@pytest.mark.parametrize("source", [
    "pip install torchviz\nimport torch\n",     # two lines: IPython applies automagic to one-line cells only
    "pip install torchviz\n\n",                 # even a blank second line turns it off (IPython 7.34, 9.18)
    "pipx install torchviz\n",                  # not a magic's name
])
def test_automagic_only_where_ipython_applies_it(source):
    assert mask(source)[1] == []


def test_cells_that_are_not_python_are_left_out():
    assert mask("%%bash\necho hi\n") is None
    assert mask("\n%%writefile helper.py\nimport os\n") is None


@pytest.mark.parametrize("tamper", [
    lambda t: t.replace("pass  # gradfix:magic 1\n", "", 1),                  # a magic dropped
    lambda t: t.replace("    pass  # gradfix:magic 1\n", "        pass  # gradfix:magic 1\n", 1),  # moved
    lambda t: t.replace("# gradfix:cell 5\n", "", 1),                         # a cell boundary lost
    lambda t: "x = 1\n" + t,                                                  # code before the first cell
])
def test_a_rewrite_that_touches_a_magic_or_a_boundary_cannot_be_mapped_back(tamper):
    nb = Notebook.read(str(FIXTURE))
    assert nb.split(tamper(nb.text)) is None


def test_guard_refuses_such_a_change_and_shows_the_others_in_cell_coordinates():
    nb = Notebook.read(str(FIXTURE))
    line = nb.text.splitlines().index("    total += loss") + 1
    finding = Finding("GF208", "history-accumulation", "m", Span(line, 5, line, 18),
                      Fix("d", [], Safety.SAFE))
    good = Change("train.ipynb", finding, line, nb.text, nb.text.replace("total += loss\n", "total += loss.item()\n"))
    bad = Change("train.ipynb", finding, line, nb.text, nb.text.replace("    pass  # gradfix:magic 1\n", ""))
    seen = []

    def decide(changes):
        seen.extend(changes)
        return Decision([True] * len(changes))

    decision = guard(nb, decide)([good, bad])
    assert decision.accept == [True, False]
    assert "IPython magic" in bad.reason
    assert len(seen) == 1 and seen[0].line == 11 and seen[0].finding.position() == "cell 5:11:5"
    assert seen[0].before.encode() == RAW and seen[0].after.encode() == RAW.replace(OLD_208, NEW_208)


def test_bad_notebooks_are_reported_by_name(tmp_path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [')
    (tmp_path / "old.ipynb").write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "worksheets": [],
                                                   "metadata": {}}))
    (tmp_path / "invalid.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                       "cells": [{"cell_type": "code", "source": "x"}]}))
    shutil.copy(FIXTURE, tmp_path / "train.ipynb")
    r = run(["check", "."], tmp_path)
    assert r.exit_code == 3
    assert "broken.ipynb: error: not a notebook: invalid JSON" in r.stderr
    assert "old.ipynb: error: nbformat 3 notebooks are not supported" in r.stderr
    assert "invalid.ipynb: error: not a valid nbformat 4 notebook" in r.stderr
    assert "train.ipynb:cell 3:8:9: GF101" in r.stdout          # the run went on
    with pytest.raises(NotebookError):
        Notebook.from_bytes("x.ipynb", b"[]")


def test_a_notebook_in_another_language_is_not_analysed(tmp_path):
    nb = json.loads(RAW)
    nb["metadata"]["language_info"] = {"name": "R"}
    nb["metadata"]["kernelspec"]["language"] = "R"
    (tmp_path / "r.ipynb").write_text(json.dumps(nb, indent=1))
    r = run(["check", "r.ipynb"], tmp_path)
    assert (r.exit_code, r.stdout) == (0, "All checks passed (1 file).\n")


def test_syntax_error_is_reported_in_cell_coordinates(tmp_path):
    nb = json.loads(RAW)
    nb["cells"][4]["source"][4] = "for step in range(3)\n"        # line 5, no colon
    (tmp_path / "bad.ipynb").write_text(json.dumps(nb, indent=1))
    r = run(["check", "bad.ipynb"], tmp_path)
    assert r.exit_code == 3
    assert "bad.ipynb:cell 5:5: error: syntax error: expected ':'; cell 5 not checked" in r.stderr
    assert "bad.ipynb:cell 3:8:9: GF101" in r.stdout            # only the bad cell is skipped


def test_a_skipped_cell_is_never_rewritten_and_the_others_are(tmp_path):
    nb = json.loads(RAW)
    nb["cells"][4]["source"].append("\n<YOUR CODE>\n")          # a course assignment's blank
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    (tmp_path / "todo.ipynb").write_text(text)
    r = run(["apply", *NO_VERIFY, "todo.ipynb"], tmp_path)
    assert "todo.ipynb:cell 5:12: error: syntax error: invalid syntax; cell 5 not checked" in r.stderr
    assert (tmp_path / "todo.ipynb").read_bytes() == text.encode().replace(OLD_101, NEW_101)


# -- check ---------------------------------------------------------------------------------


def test_check_reports_cell_positions_text_and_json(nbdir):
    r = run(["check", "train.ipynb"], nbdir)
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("train.ipynb:cell 3:8:9: GF101 in-place `.div_()` on `out`")
    assert lines[1].startswith("train.ipynb:cell 5:11:5: GF208 `total += loss` adds the loss tensor itself")
    assert lines[2] == "Found 2 findings in 1 file of 1 checked (2 with a fix: `gradfix apply --diff` to review)."
    data = json.loads(run(["check", "--format", "json", "train.ipynb"], nbdir).stdout)
    got = [(f["rule"], f["cell"], f["line"], f["column"], f["end_line"], f["end_column"]) for f in data["findings"]]
    assert got == [("GF101", 3, 8, 9, 8, 57), ("GF208", 5, 11, 5, 11, 18)]


def test_folder_walk_finds_notebooks_and_include_exclude_apply(nbdir):
    (nbdir / "sub").mkdir()
    shutil.copy(FIXTURE, nbdir / "sub" / "again.ipynb")
    (nbdir / "notes.txt").write_text("x")
    r = run(["check", "."], nbdir)
    assert "sub/again.ipynb:cell 3:8:9: GF101" in r.stdout and "train.ipynb:cell 5:11:5: GF208" in r.stdout
    assert "in 2 files" in r.stdout
    (nbdir / "pyproject.toml").write_text('[tool.gradfix]\nexclude = ["sub/"]\n')
    r = run(["check", "."], nbdir)
    assert "again.ipynb" not in r.stdout and "train.ipynb:cell 3" in r.stdout
    (nbdir / "pyproject.toml").write_text('[tool.gradfix]\ninclude = ["*.py"]\n')
    assert "All checks passed (0 files)." in run(["check", "."], nbdir).stdout
    assert "train.ipynb:cell 3" in run(["check", "train.ipynb"], nbdir).stdout   # named files always count
    (nbdir / "pyproject.toml").write_text('[tool.gradfix]\ninclude = ["*.py"]\nextend-include = ["*.ipynb"]\n')
    assert "in 2 files" in run(["check", "."], nbdir).stdout


# -- apply ---------------------------------------------------------------------------------


def test_apply_diff_prints_a_per_cell_diff_and_writes_nothing(nbdir):
    r = run(["apply", "--diff", *NO_VERIFY, "train.ipynb"], nbdir)
    assert r.exit_code == 1
    assert r.stdout == DIFF
    assert "train.ipynb:cell 3:8: GF101 rewrite as" in r.stderr
    assert "train.ipynb:cell 5:11: GF208 accumulate `loss.item()`" in r.stderr
    assert (nbdir / "train.ipynb").read_bytes() == RAW


def test_apply_writes_only_the_changed_cell_sources(nbdir):
    r = run(["apply", *NO_VERIFY, "train.ipynb"], nbdir)
    assert r.exit_code == 0, r.output
    assert (nbdir / "train.ipynb").read_bytes() == RAW.replace(OLD_101, NEW_101).replace(OLD_208, NEW_208)
    assert run(["check", "train.ipynb"], nbdir).exit_code == 0


def _variant(nb: dict) -> dict:
    """The fixture with a non-ASCII comment, a source held as one string, an empty cell."""
    nb = json.loads(json.dumps(nb))
    nb["cells"][2]["source"][7] = nb["cells"][2]["source"][7].replace("unit rows", "lignes unité ✓")
    nb["cells"][4]["source"] = "".join(nb["cells"][4]["source"])
    nb["cells"].append({"cell_type": "code", "execution_count": None, "id": "c08", "metadata": {},
                        "outputs": [], "source": []})
    return nb


@pytest.mark.parametrize("dump", [
    lambda nb: json.dumps(nb, indent=2),                                     # no final newline, key order kept
    lambda nb: json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
    lambda nb: json.dumps(nb, indent="\t", ensure_ascii=True) + "\r\n",
    lambda nb: json.dumps(nb),                                               # one line
])
def test_layout_is_kept_byte_for_byte(tmp_path, dump):
    original = _variant(json.loads(RAW))
    # the keys of a cell in another order than sorted, as some tools write them
    original["cells"][1] = dict(reversed(list(original["cells"][1].items())))
    text = dump(original)
    (tmp_path / "nb.ipynb").write_bytes(text.encode())
    r = run(["apply", *NO_VERIFY, "nb.ipynb"], tmp_path)
    assert r.exit_code == 0, r.output
    expected = json.loads(json.dumps(original))
    src = expected["cells"][2]["source"]
    src[7] = src[7].replace("out.div_(", "out = out.div(")
    expected["cells"][4]["source"] = expected["cells"][4]["source"].replace("total += loss", "total += loss.item()")
    assert (tmp_path / "nb.ipynb").read_bytes() == dump(expected).encode()


def test_apply_verifies_notebook_code_like_a_script(nbdir):
    """The loop lives at the top level of a `%%time` cell between shell escapes: the verifier
    gets the cells as one module, magics masked, and checks it like a script's loop."""
    r = run(["apply", "--diff", "--format", "json", "--select", "GF208", "train.ipynb"], nbdir)
    data = json.loads(r.stdout)
    [change] = data["changes"]
    assert (change["rule"], change["cell"], change["line"], change["verdict"], change["applied"]) == \
        ("GF208", 5, 11, "equivalent", True)
    assert data["diff"] == DIFF[DIFF.index("--- a/train.ipynb:cell 5"):]
    assert (nbdir / "train.ipynb").read_bytes() == RAW


def test_apply_interactive_on_a_notebook(nbdir):
    pexpect = pytest.importorskip("pexpect")
    exe = str(Path(sys.executable).with_name("gradfix"))
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    child = pexpect.spawn(exe, ["apply", "-i", *NO_VERIFY, "train.ipynb"], cwd=str(nbdir), env=env,
                          encoding="utf-8", timeout=30)
    child.expect(r"train.ipynb:cell 3:8:9: GF101")
    child.expect(r"\+        out = out.div\(")
    child.expect(r"Apply this change \[y,n,a,d,q,\?\]\? ")
    child.sendline("n")
    child.expect(r"train.ipynb:cell 5:11:5: GF208")
    child.expect(r"Apply this change \[y,n,a,d,q,\?\]\? ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert "train.ipynb: 1 applied, 1 skipped, 0 refused by verification (written)" in child.before
    assert (nbdir / "train.ipynb").read_bytes() == RAW.replace(OLD_208, NEW_208)


_LOGITS_NET = """import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)
"""
_SOFTMAX_NET = _LOGITS_NET.replace("return self.fc(x)", "return torch.softmax(self.fc(x), dim=1)").split(
    "import torch.nn as nn\n")[1]
_CE_TRAIN = """net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    loss = nn.CrossEntropyLoss()(net(torch.randn(8, 4)), torch.randint(0, 3, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _notebook(tmp_path, name, cells):
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                     "source": src.splitlines(keepends=True)} for i, src in enumerate(cells)],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / name).write_text(json.dumps(nb, indent=1))


def test_gf308_reads_the_class_defined_above_a_cell_not_a_later_redefinition(tmp_path):
    # logits class, CE training, then a softmax redefinition trained with CE again: only the last cell is wrong
    _notebook(tmp_path, "ch.ipynb", [_LOGITS_NET, _CE_TRAIN, _SOFTMAX_NET, _CE_TRAIN])
    r = run(["check", "--select", "GF308", "ch.ipynb"], tmp_path)
    flagged = [line.split(": GF308")[0] for line in r.stdout.splitlines() if ": GF308" in line]
    assert flagged == ["ch.ipynb:cell 4:4:34"], r.stdout
