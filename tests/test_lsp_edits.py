"""The language server's analysis of an edit, through its own entry point (`lsp_documents._lint`:
per-scope reuse, the trees lent by the whole text's parser, the project summary put off for
edits that cannot change it) always equals a fresh `check` of that text with the project as it is."""

from __future__ import annotations

import random
import re

import pytest

from gradfix import incremental
from gradfix.analysis.project import ProjectIndex
from gradfix.cli import lsp_documents as lsp
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine
from gradfix.incremental import IncrementalParser
from test_lsp_scopes import EDITS, _document, key

HELPERS = '''\
import torch


def scale(x):
    return x * 2


def clip(m):
    m.weight.data.clamp_(-1, 1)
'''

# edits of the imports: standard library ones (the summary waits) and one of a project module
IMPORT_EDITS = [
    ("import torch\n", "import torch\nimport os\n"),
    ("import torch\n", "import torch  # the framework\n"),
    ("import torch.nn as nn\n", "import torch.nn as nn\nfrom math import sqrt\n"),
    ("import torch.nn as nn\n", "import torch.nn as nn\nfrom helpers import scale\n"),
    ("    return m(x).sum()\n", "    return scale(m(x)).sum()\n"),
]


def _sites(text: str) -> list[tuple[str, str]]:
    """An edit of every number in the document (each its own site: a model's layer, a loop's
    learning rate, a loss scale, the module-level config)."""
    out = []
    for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start:line_end]
        col = m.start() - line_start
        new = line[:col] + str(int(float(m.group()) * 3 + 1)) + line[col + len(m.group()):]
        if text.count(line + "\n") == 1:
            out.append((line + "\n", new + "\n"))
    return out


def _apply(text: str, edit: tuple[str, str]) -> str:
    before, after = edit
    if before in text:
        return text.replace(before, after, 1)
    return text.replace(after, before, 1) if after in text else text


def _fresh(folder, path: str, text: str):
    """A from-scratch check of `text` with the folder's files as its project."""
    project = ProjectIndex(str(folder))
    project.load_folder(str(folder))
    project.update(path, text)
    engine = Engine(ALL_RULES)
    engine.project = project
    return engine.lint_source(text, path)


@pytest.fixture()
def document(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS)
    text = _document(5)
    path = tmp_path / "train.py"
    path.write_text(text)
    engine = Engine(ALL_RULES)
    engine.project = ProjectIndex(str(tmp_path))
    return tmp_path, str(path), text, engine


def test_edits_at_many_sites_equal_a_fresh_check(document):
    folder, path, text, engine = document
    parser, scopes, timings = IncrementalParser(), lsp.DocumentScopes(), []
    lsp._lint(engine, text, path, False, timings, parser, scopes)
    edits = _sites(text) + EDITS + IMPORT_EDITS
    rng = random.Random(15)
    good = text
    for step in range(45):
        text = _apply(text, edits[rng.randrange(len(edits))]) if text == good else good
        got = lsp._lint(engine, text, path, False, timings, parser, scopes)
        want = _fresh(folder, path, text)
        if not want[1]:
            good = text
        assert key(got[0]) == key(want[0]) and got[1] == want[1], (step, scopes.cache.last)
    assert scopes.modes.get("partial", 0) >= 10 and scopes.modes.get("reused", 0) >= 1, scopes.modes


def test_an_edited_function_is_the_only_statement_parsed_again(document, monkeypatch):
    folder, path, text, engine = document
    parser, scopes, timings = IncrementalParser(), lsp.DocumentScopes(), []
    lsp._lint(engine, text, path, False, timings, parser, scopes)
    parsed: list[str] = []
    real = incremental._Chunk.__init__

    def counting(self, chunk_text, first, last):
        parsed.append(chunk_text)
        real(self, chunk_text, first, last)

    monkeypatch.setattr(incremental._Chunk, "__init__", counting)
    edited = text.replace("class Net3(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                          "        self.fc = nn.Linear(4, 4)", "class Net3(nn.Module):\n    def __init__(self):\n"
                          "        super().__init__()\n        self.fc = nn.Linear(4, 8)")
    assert edited != text
    got = lsp._lint(engine, edited, path, False, timings, parser, scopes)
    assert scopes.cache.last == "partial"
    runs = [t for t in parsed if t.startswith('"""') or t == "pass\n"]
    statements = [t for t in parsed if t not in runs]
    # the other units of its component (helper_3, train_3) come from the whole text's trees;
    # the units blanked out are one string statement per run, whatever their length
    assert len(statements) == 1 and "class Net3" in statements[0], statements
    assert runs and all(t.strip('"\n') == "" for t in runs if t != "pass\n")
    assert key(got[0]) == key(_fresh(folder, path, edited)[0])


def test_a_standard_import_edit_puts_off_the_summary_a_project_import_does_not(document):
    folder, path, text, engine = document
    parser, scopes, timings = IncrementalParser(), lsp.DocumentScopes(), []
    lsp._lint(engine, text, path, False, timings, parser, scopes)
    before = engine.project.summary(path)
    with_os = text.replace("import torch\n", "import torch, os\n", 1)     # no line moves
    got = lsp._lint(engine, with_os, path, False, timings, parser, scopes)
    assert scopes.cache.last == "partial" and scopes.cache.analysed_share < 0.05   # nothing mentions `os`
    assert engine.project.summary(path) is before           # put off: no answer of the index changes
    assert key(got[0]) == key(_fresh(folder, path, with_os)[0])
    with_helper = with_os.replace("import torch, os\n", "import torch, os; from helpers import scale\n", 1)
    got = lsp._lint(engine, with_helper, path, False, timings, parser, scopes)
    assert engine.project.summary(path).imports.get("scale") == "helpers.scale"
    assert key(got[0]) == key(_fresh(folder, path, with_helper)[0])


PROFILE_MODULE = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"


def test_a_project_module_named_like_a_standard_one_is_a_project_import(document):
    """`profile.py` of the project shadows the standard `profile`: importing from it changes what
    the document depends on, so its summary is not put off (a later change of `Net` must reach it)."""
    folder, path, text, engine = document
    (folder / "profile.py").write_text(PROFILE_MODULE)
    parser, scopes, timings = IncrementalParser(), lsp.DocumentScopes(), []
    lsp._lint(engine, text, path, False, timings, parser, scopes)
    assert engine.project.names_module("profile") and not engine.project.names_module("math.sqrt")
    text = text.replace("import torch\n", "import torch; from profile import Net\n", 1)
    lsp._lint(engine, text, path, False, timings, parser, scopes)
    text = text.replace("CONFIG = {'lr': 0.1}", "net = Net(); out = net.forward(torch.ones(3, 4))")
    got = lsp._lint(engine, text, path, False, timings, parser, scopes)
    assert "GF305" in {f.rule for f in got[0]}
    # Net stops being a module (another document's edit): the document's findings follow
    (folder / "profile.py").write_text(PROFILE_MODULE.replace("(nn.Module)", ""))
    engine.project.update(str(folder / "profile.py"), PROFILE_MODULE.replace("(nn.Module)", ""))
    text = text.replace("/ 1000000000\n", "/ 10\n", 1)
    got = lsp._lint(engine, text, path, False, timings, parser, scopes)
    assert "GF305" not in {f.rule for f in got[0]}
    assert key(got[0]) == key(_fresh(folder, path, text)[0])
