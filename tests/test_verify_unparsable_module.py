"""A module of the project that does not parse (merge-conflict markers, Python 2) is a stub for the checked file, as a
missing package is: names read from it raise only when the unit uses them (sandbox.py)."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import Verifier, VerifyRequest

pytest.importorskip("torch")

BROKEN = textwrap.dedent('''
    """Metrics."""
    <<<<<<< HEAD
    def eer(scores):
        return 0.0
    =======
    def eer(scores, labels):
        return 0.0
    >>>>>>> other
''')

MODEL = textwrap.dedent('''
    import torch
    import torch.nn as nn

    from metrics import eer


    class Scorer(nn.Module):
        def __init__(self, width=6, report=False):
            super().__init__()
            self.proj = nn.Linear(width, 3)
            self.report = report

        def forward(self, x):
            out = self.proj(x)
            if self.report:
                print(eer(out))
            return out


    def score(model, x):
        return model.forward(x)
''')


def _request(tmp_path, src):
    old, new = "model.forward(x)", "model(x)"
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": old, "call_new": new,
                "setup": "model = Scorer()"}
    return VerifyRequest(path=str(tmp_path / "model.py"), original=src, rewritten=src.replace(old, new), rule="GF305",
                         line=21, contract=contract, project_root=str(tmp_path))


def test_unparsable_project_module_is_stubbed(tmp_path):
    (tmp_path / "metrics.py").write_text(BROKEN)
    (tmp_path / "model.py").write_text(MODEL)
    with Verifier(jobs=1, timeout_s=20.0) as v:
        plain, = v.verify_many([_request(tmp_path, MODEL)])
        (tmp_path / "model.py").write_text(MODEL.replace("report=False", "report=True"))
        touched, = v.verify_many([_request(tmp_path, MODEL.replace("report=False", "report=True"))])
    assert plain.verdict == "equivalent", plain
    assert "metrics (does not parse)" in plain.detail, plain
    assert touched.verdict == "untestable", touched
    assert "a module of the project that does not parse" in touched.detail, touched
    assert "metrics.py, line 3" in touched.detail, touched
