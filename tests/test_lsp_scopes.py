"""The language server's per-scope reuse (cli/lsp_scopes.py) must give exactly the findings of
a from-scratch analysis: a component of top-level statements analysed alone (the rest blanked
out) finds what the whole file finds in it, and over edit sequences the reused result always
equals a fresh lint."""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path

import pytest

from gradfix.cli import lsp
from gradfix.cli.lsp_scopes import ScopeCache, _by_unit, _reduced, components, split_units
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine
from gradfix.incremental import IncrementalParser

ROOT = Path(__file__).resolve().parent.parent
CASES = [p for p in sorted((ROOT / "golden").rglob("*.py")) if not p.name.endswith(".fixed.py")]


def key(findings):
    """Everything a client sees of a finding, and its fix contract (GF102's `reference` is the
    whole text with the fix: the server gives the verifier the contracts of a whole-file
    analysis, see test_verification_takes_whole_file_contracts)."""
    out = []
    for f in findings:
        contract = None
        if f.fix is not None:
            contract = json.dumps({k: v for k, v in f.fix.contract.items() if k != "reference"},
                                  sort_keys=True, default=repr)
        out.append((f.rule, f.span.line, f.span.column, f.span.end_line, f.span.end_column, f.message,
                    None if f.fix is None else (f.fix.description, f.fix.safety.value), contract))
    return sorted(out)


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


MULTI = [p for p in CASES if len(ast.parse(p.read_text()).body) >= 4]


@pytest.mark.parametrize("case", MULTI[::6], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_component_alone_finds_what_the_whole_file_finds_there(engine, case):
    source = case.read_text()
    units = split_units(source, ast.parse(source), {})
    comp = components(units)
    whole, errors = engine.lint_source(source, "t.py")
    per_unit = _by_unit(units, whole)
    assert per_unit is not None and not errors
    for c in sorted(set(comp)):
        members = [i for i in range(len(units)) if comp[i] == c]
        if len(members) == len(units) or all(units[i].facts.has_import for i in members):
            continue
        reduced = _reduced(units, [comp[i] == c or u.facts.has_import for i, u in enumerate(units)])
        assert reduced.count("\n") == source.count("\n")
        got, errs = engine.lint_source(reduced, "t.py")
        assert not errs
        mine = _by_unit(units, got)
        assert key(f for i in members for f in mine[i]) == key(f for i in members for f in per_unit[i]), \
            (case, [units[i].first for i in members])


BLOCK = '''

class Net{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h *= 2
        return h


def helper_{i}(m, x):
    return m(x).sum()


def train_{i}(loader):
    model = Net{i}()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        loss = helper_{i}(model, x) / 1000000000
        loss.backward()
        opt.step()
'''


def _document(n: int) -> str:
    return '"""A generated training file."""\nimport torch\nimport torch.nn as nn\n' + \
        "".join(BLOCK.format(i=i) for i in range(n)) + "\nCONFIG = {'lr': 0.1}\n"


# (before, after): each edit is made, or undone when its result is there
EDITS = [
    ("h *= 2", "h = h * 2"),
    ("/ 1000000000\n", "/ 10\n"),
    ("    return m(x).sum()\n", "    return m(x).sum()  # gradfix: ignore\n"),
    ("        opt.zero_grad()\n        loss = helper_4", "        loss = helper_4"),               # a hazard appears
    ("lr=0.1)\n    for x, y in loader:", "lr=0.2)\n    model.eval()\n    for x, y in loader:"),
    ("import torch.nn as nn\n", "import torch.nn as nn\nimport math\n"),                       # an import
    ("import torch\n", "import torch, os\n"),                                                     # a standard one
    ("    return m(x).sum()\n", "    return m(x).sum() + len(os.sep)\n"),                          # ... read
    ("import torch.nn as nn\n", "import torch.nn as nn, torch.optim as optim\n"),                 # a torch one
    ("def helper_1(", "def helper_1b("),                                                           # a rename
    ("helper_2(model, x)", "helper_3(model, x)"),                                                  # a new link
    ("\n\ndef train_0", "\n\n\n# a comment\ndef train_0"),                                       # lines moved
    ("class Net3(nn.Module):", "class Net3(Net2):"),
    ("CONFIG = {'lr': 0.1}", "CONFIG = {'lr': 0.3}"),
    ("        h = torch.sigmoid(self.fc(x))\n", "        h = torch.sigmoid(self.fc(x)\n"),        # a syntax error
    ("def helper_0(m, x):\n    return m(x).sum()\n", ""),                                       # a unit goes
    ("\n\nCONFIG", "\n\nnet = Net1()\nout = helper_0(net, torch.ones(4))\nCONFIG"),              # module-level code
]


def _edit(text: str, k: int) -> str:
    before, after = EDITS[k]
    if before in text:
        return text.replace(before, after, 1)
    return text.replace(after, before, 1) if after else text


def test_edit_sequences_equal_from_scratch_lints(engine):
    rng = random.Random(15)
    text = _document(5)
    cache, parser, reduced = ScopeCache(), IncrementalParser(), IncrementalParser()
    modes = []
    good = text
    for step in range(30):
        text = _edit(text, rng.randrange(len(EDITS))) if text == good else good   # a syntax error is undone next
        units = cache.split(text)
        try:
            tree = ast.parse(text)
            good = text
        except SyntaxError:
            tree = None
        # the units found by parsing only around the edit are those of a whole parse
        assert (units is None) == (tree is None)
        if units is not None:
            assert [(u.text, u.first, u.last, u.facts) for u in units] == \
                [(u.text, u.first, u.last, u.facts) for u in split_units(text, tree, {})], step
        got = cache.lint(text, units, lambda: engine.lint_source(text, "t.py", incremental=parser),
                         lambda t: engine.lint_source(t, "t.py", incremental=reduced))
        want = engine.lint_source(text, "t.py")
        assert key(got[0]) == key(want[0]) and got[1] == want[1], step
        modes.append(cache.last)
    # the reuse is exercised, and so is the fallback
    assert modes.count("partial") >= 8 and "full" in modes, " ".join(modes)


def test_reused_findings_of_untouched_scopes(engine):
    text = _document(8)
    cache = ScopeCache()
    cache.lint(text, cache.split(text), lambda: engine.lint_source(text, "t.py"), None)
    edited = text.replace("h *= 2", "h = h * 2", 1)          # Net0's forward only
    analysed = []

    def partial(t):
        analysed.append(t)
        return engine.lint_source(t, "t.py")

    got = cache.lint(edited, cache.split(edited), None, partial)
    assert cache.last == "partial" and cache.analysed_share < 0.25
    assert "class Net0" in analysed[0] and "class Net1" not in analysed[0]
    assert key(got[0]) == key(engine.lint_source(edited, "t.py")[0])
    assert {f.rule for f in got[0]} >= {"GF101", "GF201"}


def test_project_summary_waits_until_another_document_is_analysed(tmp_path, engine):
    from gradfix.analysis.project import ProjectIndex

    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("import torch\n\n\ndef step(x):\n    return x\n")
    b.write_text("import torch\nfrom a import step\n\n\ndef run(x):\n    with torch.no_grad():\n        return step(x)\n")
    project = ProjectIndex(str(tmp_path))
    eng = Engine(ALL_RULES)
    eng.project = project
    scopes_b = lsp.DocumentScopes()
    text_b = b.read_text()
    timings: list = []
    lsp._lint(eng, text_b, str(b), False, timings, IncrementalParser(), scopes_b)
    before = project.summary(str(b)).sites
    edited = text_b.replace("    with torch.no_grad():\n        return step(x)\n", "    return step(x)\n")
    lsp._lint(eng, edited, str(b), False, timings, IncrementalParser(), scopes_b)
    assert project.summary(str(b)).sites == before           # put off: b's own analysis does not read it
    lsp._lint(eng, a.read_text(), str(a), False, timings, IncrementalParser(), lsp.DocumentScopes())
    after = project.summary(str(b)).sites                     # a's analysis reads b's calls: brought up to date
    assert after != before and not any(s.no_grad for s in after)


def test_verification_takes_whole_file_contracts(engine):
    source = (ROOT / "golden" / "seeds" / "seed1_scenario.py").read_text()
    proposals = lsp._proposals(engine, source, "t.py", lambda: True)
    fixes = [f for f in engine.lint_source(source, "t.py")[0] if f.fix is not None]
    assert fixes and all(proposals.contracts[(f.rule, f.span)] == f.fix.contract for f in fixes)


def test_standard_library_import_edits_analyse_only_the_units_that_read_them(engine):
    text = _document(8).replace("    return m(x).sum()\n", "    return m(x).sum() + len(os.sep)\n", 1)
    cache = ScopeCache()
    cache.lint(text, cache.split(text), lambda: engine.lint_source(text, "t.py"), None)
    seen: list[str] = []

    def partial(t):
        seen.append(t)
        return engine.lint_source(t, "t.py")

    for edited in (text.replace("import torch\n", "import torch, os\n", 1),
                   text.replace("import torch\n", "import torch, os, sys\n", 1)):
        got = cache.lint(edited, cache.split(edited), lambda: engine.lint_source(edited, "t.py"), partial)
        assert key(got[0]) == key(engine.lint_source(edited, "t.py")[0])
    assert cache.last == "partial" and "def helper_0" in seen[0] and "def helper_1" not in seen[0]
    torch_edit = text.replace("import torch.nn as nn\n", "import torch.nn as nn, torch.optim as optim\n", 1)
    cache.lint(torch_edit, cache.split(torch_edit), lambda: engine.lint_source(torch_edit, "t.py"), partial)
    assert cache.last == "full"


def test_units_split_around_an_edit_are_those_of_a_whole_parse():
    """Line-level edits at and around statement boundaries: typing at the end of a body, a new
    top-level line, an indented one, a dedent, comment lines, deletions, an unclosed bracket."""
    rng = random.Random(6)
    pieces = ["", "# note", "    x = 1", "y = 2", "def h():", "    return 3", "else:", "(", "@dec", "    # inner"]
    for case in CASES[::17] + [ROOT / "golden" / "seeds" / "seed1_scenario.py"]:
        cache = ScopeCache()
        text = case.read_text()
        units = cache.split(text)
        if units is None:
            continue
        nothing = (lambda: ([], []), lambda _t: ([], []))
        cache.lint(text, units, *nothing)
        for _step in range(12):
            lines = text.split("\n")
            i = rng.randrange(len(lines) + 1)
            if rng.random() < 0.3 and i < len(lines):
                del lines[i]
            else:
                lines.insert(i, rng.choice(pieces))
            text = "\n".join(lines)
            units = cache.split(text)
            try:
                tree = ast.parse(text)
            except SyntaxError:
                assert units is None
                cache.forget()
                text = case.read_text()
                cache.lint(text, cache.split(text), *nothing)
                continue
            assert [(u.text, u.first, u.last) for u in units] == \
                [(u.text, u.first, u.last) for u in split_units(text, tree, {})], (case, _step)
            cache.lint(text, units, *nothing)


def test_an_edit_is_diffed_against_the_previous_version_once(tmp_path, engine, monkeypatch):
    """summary_unchanged and lint both read the edit's unit diff: it is computed once."""
    from gradfix.analysis.project import ProjectIndex
    from gradfix.cli import lsp_scopes

    calls = []
    real = lsp_scopes._diff
    monkeypatch.setattr(lsp_scopes, "_diff", lambda old, new: calls.append(1) or real(old, new))
    path = tmp_path / "m.py"
    text = _document(4)
    path.write_text(text)
    eng = Engine(ALL_RULES)
    eng.project = ProjectIndex(str(tmp_path))
    scopes, parser = lsp.DocumentScopes(), IncrementalParser()
    lsp._lint(eng, text, str(path), False, [], parser, scopes)
    assert calls == []
    edited = text.replace("h *= 2", "h = h * 2", 1)
    got = lsp._lint(eng, edited, str(path), False, [], parser, scopes)
    assert scopes.cache.last == "partial" and len(calls) == 1
    assert key(got[0]) == key(eng.lint_source(edited, str(path))[0])
