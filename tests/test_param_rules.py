"""GF301-GF308: what the golden cases cannot show on their own.

The verifier's contracts must catch the wrong rewrites these rules are careful to avoid (a
positional `torch.autocast("cuda", True)`, creating a float64 tensor directly instead of keeping
the cast, a rewrite that registers nothing), and the documentation must be complete. One shared
Verifier with worker processes, like tests/test_verify.py.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradfix.codemods import RULES_BY_ID
from gradfix.engine import Engine, accept_all
from gradfix.verify import Verifier, VerifyRequest

pytest.importorskip("torch")

PARAM_RULES = [f"GF30{i}" for i in range(1, 10)]


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


def verify(v: Verifier, original: str, rewritten: str, contract: dict, rule: str) -> tuple[str, str]:
    req = VerifyRequest(path="case.py", original=textwrap.dedent(original), rewritten=textwrap.dedent(rewritten),
                        rule=rule, line=1, contract=contract)
    (res,) = v.verify_many([req])
    return res.verdict, res.detail


def test_naive_positional_autocast_is_caught(verifier):
    """torch.autocast takes dtype second: `torch.autocast("cuda", True)` sets dtype=True."""
    src = "import torch\n\n\ndef f(m, x):\n    with torch.cuda.amp.autocast(True):\n        return m(x)\n"
    bad = src.replace("torch.cuda.amp.autocast(True)", 'torch.autocast("cuda", True)')
    verdict, detail = verify(verifier, src, bad, {"kind": "same-object", "api": "autocast", "device": "cuda",
                                                  "old": "torch.cuda.amp.autocast(True)",
                                                  "new": 'torch.autocast("cuda", True)'}, "GF301")
    assert verdict == "failed" and "fast_dtype" in detail, detail
    # the rule itself turns the positional flag into a keyword
    fixed = Engine([RULES_BY_ID["GF301"]]).fix_source(src, "case.py", accept_all).fixed
    assert 'torch.autocast("cuda", enabled=True)' in fixed


def test_gradscaler_setting_change_is_caught(verifier):
    src = "import torch\n\nscaler = torch.cuda.amp.GradScaler(init_scale=1024.0)\n"
    bad = src.replace("torch.cuda.amp.GradScaler(init_scale=1024.0)", 'torch.amp.GradScaler("cuda")')
    verdict, detail = verify(verifier, src, bad, {"kind": "same-object", "api": "GradScaler", "device": "cuda",
                                                  "old": "torch.cuda.amp.GradScaler(init_scale=1024.0)",
                                                  "new": 'torch.amp.GradScaler("cuda")'}, "GF301")
    assert verdict == "failed" and "init_scale" in detail, detail


def test_creating_in_float64_changes_the_values(verifier):
    """Why GF302 keeps `.double()` and adds `.requires_grad_()` instead of `dtype=torch.float64`."""
    src = "import torch\n\nw = torch.randn(5, requires_grad=True).double()\nopt = torch.optim.SGD([w], lr=0.1)\n"
    old, new = "torch.randn(5, requires_grad=True).double()", "torch.randn(5, dtype=torch.float64, requires_grad=True)"
    verdict, detail = verify(verifier, src, src.replace(old, new), {"kind": "leaf-tensor", "old": old, "new": new},
                             "GF302")
    assert verdict == "failed" and "values differ" in detail, detail
    new = "torch.randn(5).double().requires_grad_()"
    verdict, detail = verify(verifier, src, src.replace(old, new), {"kind": "leaf-tensor", "old": old, "new": new},
                             "GF302")
    assert verdict == "fixes-hazard" and "now a tensor" in detail, detail


def test_rewrite_that_registers_nothing_fails(verifier):
    src = """
    import torch
    import torch.nn as nn


    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.w = nn.Parameter(torch.ones(4)).double()

        def forward(self, x):
            return self.fc(x) * self.w.float()
    """
    still_wrong = src.replace("nn.Parameter(torch.ones(4)).double()", "nn.Parameter(torch.ones(4)).double().clone()")
    verdict, detail = verify(verifier, src, still_wrong, {"kind": "registers-params", "class": "M", "attrs": ["w"]},
                             "GF303")
    assert verdict == "failed" and "registers no parameter" in detail, detail
    right = src.replace("nn.Parameter(torch.ones(4)).double()", "nn.Parameter(torch.ones(4).double())")
    verdict, detail = verify(verifier, src, right, {"kind": "registers-params", "class": "M", "attrs": ["w"]}, "GF303")
    assert verdict == "fixes-hazard" and "2 parameters -> 3 (w)" in detail, detail


def test_cpu_only_moves_are_forced_to_copy(verifier):
    """On CPU `.to("cpu")` returns the Parameter itself; the verdict must say the copy was forced."""
    src = """
    import torch
    import torch.nn as nn


    class Gate(nn.Module):
        def __init__(self, device="cpu"):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(6, 2)).to(device)

        def forward(self, x):
            return x @ self.w
    """
    right = src.replace("nn.Parameter(torch.zeros(6, 2)).to(device)", "nn.Parameter(torch.zeros(6, 2).to(device))")
    verdict, detail = verify(verifier, src, right, {"kind": "registers-params", "class": "Gate", "attrs": ["w"]},
                             "GF303")
    assert verdict == "fixes-hazard", detail
    assert "0 parameters -> 1 (w)" in detail and "forced to copy" in detail, detail


def test_docs_are_complete():
    for rid in PARAM_RULES:
        rule = RULES_BY_ID[rid]
        doc = rule.documentation()
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix", "## Fix safety",
                        "## Verification"):
            assert heading in doc, (rid, heading)
        assert rule.docs.fixed_example, rid


def test_detect_only_rules_offer_no_fix():
    src = textwrap.dedent("""
        import torch
        import torch.nn.functional as F

        model = torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in [(torch.randn(2, 4), torch.tensor([0, 1]))]:
            out = model(x)
            loss = F.cross_entropy(F.softmax(out.detach(), dim=1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)
    findings, _ = Engine([RULES_BY_ID["GF307"], RULES_BY_ID["GF308"]]).lint_source(src, "t.py")
    assert sorted(f.rule for f in findings) == ["GF307", "GF308"]
    assert all(f.fix is None for f in findings)


def _double_softmax_shrink(classes: int) -> float:
    """How many times smaller the head's gradient is when cross_entropy gets softmax(logits) instead of logits."""
    import torch
    import torch.nn.functional as F

    gen = torch.Generator().manual_seed(0)
    feats = torch.randn(256, 64, generator=gen)
    labels = torch.randint(0, classes, (256,), generator=gen)
    w = (torch.randn(64, classes, generator=gen) / 8).requires_grad_()
    logits = feats @ w
    (on_logits,) = torch.autograd.grad(F.cross_entropy(logits, labels), w, retain_graph=True)
    (on_probs,) = torch.autograd.grad(F.cross_entropy(logits.softmax(-1), labels), w)
    return float(on_logits.norm() / on_probs.norm())


def test_double_softmax_message_names_no_fixed_shrink():
    """The shrink depends on the class count (a two-class head loses far less than a hundred-class one), which
    the rule cannot see: the message must say so instead of one factor that is false for small heads."""
    src = textwrap.dedent("""
        import torch.nn.functional as F

        def step(model, x, y):
            probs = F.softmax(model(x), dim=1)
            return F.cross_entropy(probs, y)
    """)
    findings, _ = Engine([RULES_BY_ID["GF308"]]).lint_source(src, "t.py")
    assert [f.rule for f in findings] == ["GF308"]
    assert "grows with the number of classes" in findings[0].message
    assert "100-fold" not in findings[0].message
    two, hundred = _double_softmax_shrink(2), _double_softmax_shrink(100)
    assert 2 < two < 20 < hundred



def test_kl_div_hazards_are_what_the_message_says():
    """GF309's claims, run: a softmax input makes kl_div negative (not a divergence) and its gradient
    maximises sum(target * p); a log_softmax target read as probabilities makes the loss NaN while
    the gradient reaching the input stays finite. The rule flags both forms and offers no fix."""
    import torch
    import torch.nn.functional as F

    gen = torch.Generator().manual_seed(0)
    s, t = torch.randn(4, 10, generator=gen), torch.randn(4, 10, generator=gen)
    right = F.kl_div(F.log_softmax(s, 1), F.softmax(t, 1), reduction="batchmean")
    probs_in = F.kl_div(F.softmax(s, 1), F.softmax(t, 1), reduction="batchmean")
    assert right > 0 > probs_in
    p = F.softmax(s, 1).requires_grad_()
    (grad,) = torch.autograd.grad(F.kl_div(p, F.softmax(t, 1), reduction="sum"), p)
    assert torch.allclose(grad, -F.softmax(t, 1))       # the gradient of -sum(target * p)
    x = s.clone().requires_grad_()
    swapped = F.kl_div(F.softmax(x, 1), F.log_softmax(t, 1), reduction="batchmean")
    swapped.backward()
    assert torch.isnan(swapped) and torch.isfinite(x.grad).all()
    src = textwrap.dedent("""
        import torch.nn.functional as F

        def mutual(a, b):
            return F.kl_div(F.softmax(a, 1), F.log_softmax(b, 1), reduction="batchmean")
    """)
    findings, _ = Engine([RULES_BY_ID["GF309"]]).lint_source(src, "t.py")
    assert [(f.rule, f.span.column) for f in findings] == [("GF309", 21), ("GF309", 38)]
    assert "goes negative" in findings[0].message and "NaN" in findings[1].message
    assert all(f.fix is None for f in findings)


GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@pytest.mark.parametrize("rid", PARAM_RULES)
def test_golden_cases_per_rule(rid):
    """At least 4 positives and 4 negatives per rule, and every positive fires its own rule."""
    cases = sorted(p for p in (GOLDEN / rid).glob("*.py") if not p.name.endswith(".fixed.py"))
    pos = [p for p in cases if p.stem.startswith("pos_")]
    neg = [p for p in cases if p.stem.startswith("neg_")]
    assert len(pos) >= 4 and len(neg) >= 4, (rid, len(pos), len(neg))
    engine = Engine([RULES_BY_ID[rid]])
    for case in pos:
        findings, errors = engine.lint_source(case.read_text(encoding="utf-8"), str(case))
        assert not errors and findings, case


def test_forward_of_loop_elements_module_level_list_and_hooked_elements():
    """GF305's loop elements: a module-level `nn.ModuleList` iterated in a function (its binding's step belongs to
    the module's flow, not the function's: this raised IndexError once), and hooks registered on the elements under
    another name (`for blk in self.blocks: blk.register_forward_hook(...)`), which make the rewrite unsafe: calling
    the element runs the hook `forward()` skipped."""
    from gradfix.model import Safety

    module_level = textwrap.dedent("""
        import torch.nn as nn

        ONE, TWO, THREE = 1, 2, 3
        LAYERS = nn.ModuleList([nn.Linear(2, 2)])

        def run(x):
            for layer in LAYERS:
                x = layer.forward(x)
            return x
    """)
    hooked = textwrap.dedent("""
        import torch.nn as nn

        def double(_mod, _inp, out):
            return out * 2

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
                for blk in self.blocks:
                    blk.register_forward_hook(double)

            def forward(self, x):
                for m in self.blocks:
                    x = m.forward(x)
                return x
    """)
    engine = Engine([RULES_BY_ID["GF305"]])
    findings, errors = engine.lint_source(module_level, "t.py")
    assert errors == [] and [(f.rule, f.span.line) for f in findings] == [("GF305", 9)]
    assert findings[0].fix.safety is Safety.SAFE
    findings, errors = engine.lint_source(hooked, "t.py")
    assert errors == [] and [(f.rule, f.span.line) for f in findings] == [("GF305", 16)]
    assert findings[0].fix.safety is Safety.UNSAFE
