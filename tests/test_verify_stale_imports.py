"""A module-level import of the project's own code that the project's source cannot satisfy (a name the module no
longer defines, a submodule the package does not hold, a circular import) is a stub that raises only when the unit
touches it (stale_imports.py); anything else still makes the file unloadable."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")


LAYERS = textwrap.dedent('''
    import torch.nn as nn

    MODES = ("plain", "scaled")


    class Head(nn.Module):
        def __init__(self, width=6):
            super().__init__()
            self.proj = nn.Linear(width, 3)

        def forward(self, x):
            return self.proj(x)
''')

SCORER = textwrap.dedent('''
    import torch
    import torch.nn as nn

    from layers import Head, {imported}


    class Scorer(nn.Module):
        def __init__(self, width=6):
            super().__init__()
            self.head = Head(width)

        def forward(self, x):
            out = self.head(x)
    {use}
            return out


    def score(model, x):
        return model.forward(x)
''')


def _source(imported="OldHead", use=""):
    return SCORER.replace("{imported}", imported).replace("{use}", use)


def _request(tmp_path, src):
    old, new = "model.forward(x)", "model(x)"
    line = next(i for i, text in enumerate(src.splitlines(), 1) if old in text)
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": old, "call_new": new,
                "setup": "model = Scorer()"}
    return VerifyRequest(path=str(tmp_path / "scorer.py"), original=src, rewritten=src.replace(old, new), rule="GF305",
                         line=line, contract=contract, project_root=str(tmp_path))


def _verify(verifier, tmp_path, *sources):
    out = []
    for src in sources:
        (tmp_path / "scorer.py").write_text(src)
        out += verifier.verify_many([_request(tmp_path, src)])
    return out


def test_a_name_the_project_module_no_longer_defines_is_a_stub(tmp_path, shared_verifier):
    (tmp_path / "layers.py").write_text(LAYERS)
    untouched, touched = _verify(shared_verifier, tmp_path, _source(), _source(use="        out = OldHead(3)(out)"))
    assert untouched.verdict == "equivalent", untouched
    assert "layers.OldHead (the project's own import error: layers.py defines no `OldHead`" in untouched.detail
    assert touched.verdict == "untestable", touched
    assert "the unit uses layers.OldHead, a stub standing in for an import that fails" in touched.detail


def test_a_comparison_with_the_stub_is_a_use(tmp_path, shared_verifier):
    # `==` on an ordinary stub would be False, silently taking one branch: a stale name must raise there too
    (tmp_path / "layers.py").write_text(LAYERS)
    src = _source("SCALED", "        if MODES[0] == SCALED:\n            out = out * 2")
    res, = _verify(shared_verifier, tmp_path, src)
    assert res.verdict == "untestable", res
    assert "layers.SCALED" in res.detail, res


def test_a_name_the_module_defines_but_fails_to_bind_is_not_stubbed(tmp_path, shared_verifier):
    # `OldHead` is bound by the module's source (a try whose import fails); Python's error is not "stale": it stands
    (tmp_path / "layers.py").write_text(LAYERS + "\ntry:\n    from layers_v1 import OldHead\nexcept KeyError:\n"
                                        "    pass\n")
    res, = _verify(shared_verifier, tmp_path, _source())
    assert res.verdict == "untestable", res
    assert "module not importable in isolation" in res.detail, res
    assert "a stub standing in" not in res.detail and "OldHead (" not in res.detail, res


def test_a_submodule_the_project_package_does_not_hold_is_a_stub(tmp_path, shared_verifier):
    pkg = tmp_path / "nets"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "blocks.py").write_text(LAYERS)
    src = _source().replace("from layers import Head, OldHead", "from nets.blocks import Head\nfrom nets.losses import "
                                                                "RingLoss")
    res, = _verify(shared_verifier, tmp_path, src)
    assert res.verdict == "equivalent", res
    assert "nets.losses.RingLoss (the project's own import error: the project's package `nets`" in res.detail, res


def test_a_missing_package_is_not_called_the_projects_own(tmp_path, shared_verifier):
    # `from layers import ...` where there is no layers module at all: a missing package, stubbed by the
    # ordinary stub of a module that is not installed, never by this module
    res, = _verify(shared_verifier, tmp_path, _source())
    assert "the project's own" not in res.detail, res


def test_a_submodule_gone_from_an_installed_package_is_a_stub(tmp_path, shared_verifier):
    # `from torch._six import inf` of old code: torch is installed, the submodule is not in this version
    (tmp_path / "layers.py").write_text(LAYERS)
    gone = "from torch.gf_no_such_module import inf\n"
    untouched, touched = _verify(shared_verifier, tmp_path, gone + _source("Head as Head2"),
                                 gone + _source("Head as Head2", "        out = out.clamp(max=float(inf))"))
    assert untouched.verdict == "equivalent", untouched
    assert "torch.gf_no_such_module.inf (the installed torch" in untouched.detail, untouched
    assert touched.verdict == "untestable", touched
    assert "the unit uses torch.gf_no_such_module.inf" in touched.detail, touched


def test_an_import_the_rewrite_adds_is_never_guarded():
    # only the original's imports may be stubbed: in the checked file's rewritten version, an import statement the
    # original does not have is left as it is, so that its failure fails the rewrite
    import ast

    from gradfix.verify import stale_imports

    original = "from layers import Head\n"
    stale_imports.ORIGINAL.clear()
    stale_imports.set_original(original)
    rewritten = ast.parse("from torch.gf_no_such_module import inf\n" + original)
    guarded = stale_imports.guard(rewritten, checked=True)
    assert isinstance(guarded.body[0], ast.ImportFrom)  # the added import: not wrapped
    assert isinstance(guarded.body[1], ast.Try)  # the original's: wrapped
    module = stale_imports.guard(ast.parse("from torch.gf_no_such_module import inf\n"))
    assert isinstance(module.body[0], ast.Try)  # a project module (never rewritten): every import
    stale_imports.ORIGINAL.clear()
