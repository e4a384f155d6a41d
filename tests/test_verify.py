"""Tests of gradfix.verify: real torch in real worker processes, no mocks.

One shared Verifier (two workers) serves most tests; a second one with a short timeout
serves the hang / crash / worker-death tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import Verifier, VerifyRequest, VerifyResult
from gradfix.verify import source as S
from gradfix.verify import changes as CH

REPO = Path(__file__).resolve().parents[1]
CASES = Path(__file__).with_name("verify_cases")

pytest.importorskip("torch")  # the checks need torch in the workers; skip cleanly without it


def req(original: str, rewritten: str, contract: dict | None = None, *, rule: str = "GF101", root: str | None = None,
        path: str = "case.py") -> VerifyRequest:
    return VerifyRequest(
        path=path,
        original=textwrap.dedent(original),
        rewritten=textwrap.dedent(rewritten),
        rule=rule,
        line=1,
        contract=contract or {"kind": "equal"},
        project_root=root,
    )


def swap(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new)


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


@pytest.fixture(scope="module")
def fragile():
    """Short timeout, for checks that hang, crash or kill their worker."""
    with Verifier(jobs=1, timeout_s=2.0) as v:
        yield v


def check(v: Verifier, r: VerifyRequest) -> VerifyResult:
    (res,) = v.verify_many([r])
    return res


# --------------------------------------------------------------------------- cases

SEED = (CASES / "seed_net.py.txt").read_text()
SEED_FIXED = swap(
    swap(SEED, "f_log = f.detach() ", "f_log = f.detach().clone() "),
    "f /= (f.norm(dim=1, keepdim=True) + 1e-6)",
    "f = f / (f.norm(dim=1, keepdim=True) + 1e-6)",
)

ALIAS = """
import torch, torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        skip = h
        h /= h.norm(dim=1, keepdim=True)
        return h + skip
"""

HEAD = """
import torch.nn as nn

class Head(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, 4)
        self.drop = nn.Dropout(0.2)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        y = self.fc(self.drop(x))
        y *= 0.5
        return self.bn(y).softmax(-1)
"""

SCALE_MODULE = """
import torch, torch.nn as nn, torch.nn.functional as F

class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        return F.mse_loss(self.fc(x).squeeze(-1), x.sum(-1)) / 1000000000
"""

SCALE_LOOP = """
import torch, torch.nn.functional as F
from model import net, loader

opt = torch.optim.Adam(net.parameters())
for x, y in loader:
    logits = net(x)
    loss = F.binary_cross_entropy_with_logits(logits, y) / 1000000000
    loss.backward()
    opt.step()
"""
LOSS_OLD = "F.binary_cross_entropy_with_logits(logits, y) / 1000000000"
LOSS_NEW = "F.binary_cross_entropy_with_logits(logits, y)"

# The first seed's regulariser; the model is the seed Net with its forward already fixed.
REG_NEW = swap(
    SEED_FIXED,
    "    with torch.no_grad():\n        m.weight.data = torch.clamp(m.weight.data, -1.0, 1.0)\n    return",
    "    return",
)
STEP = """opt.zero_grad(set_to_none=True)
logits = net(__gf_input())
loss = __gf_loss(logits) + l2_sp_regularizer(net.fc, 1e-4)
loss.backward()
opt.step()
"""


def clamp_contract(lo: float = -1.0, hi: float = 1.0) -> dict:
    return {
        "kind": "clamp-moved",
        "setup": "net = Net()\nopt = torch.optim.AdamW(net.parameters(), lr=1e-3)",
        "step_old": STEP,
        "step_new": STEP + f"with torch.no_grad():\n    net.fc.weight.clamp_({lo}, {hi})\n",
        "param": "net.fc.weight",
        "bounds": [-1.0, 1.0],
        "lr_hint": None,
        "model": "net",
    }


GAINS = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

def reg(m):
    return (m.weight.data ** 2).sum()
"""


# --------------------------------------------------------------------------- contract "equal"


def test_seed_net_fixes_crash_via_cuda_redirect(verifier):
    res = check(verifier, req(SEED, SEED_FIXED))
    assert res.verdict == "fixes-crash", res
    assert res.unit == "Net"
    assert "modified by an inplace operation" in res.detail
    assert "intended result" in res.detail
    assert "checked on CPU via cuda->cpu redirect" in res.detail


def test_alias_trap_rewrite_fails(verifier):
    new = swap(ALIAS, "h /= h.norm(dim=1, keepdim=True)", "h = h / (h.norm(dim=1, keepdim=True))")
    res = check(verifier, req(ALIAS, new))
    assert res.verdict == "failed", res
    assert "differs" in res.detail and "norm-relative" in res.detail


def test_equivalent_out_of_place_rewrite(verifier):
    res = check(verifier, req(HEAD, swap(HEAD, "y *= 0.5", "y = y * 0.5")))
    assert res.verdict == "equivalent", res
    assert res.unit == "Head"
    assert "eval and train mode" in res.detail
    assert "cuda" not in res.detail


def test_eps_change_fails(verifier):
    new = swap(SEED_FIXED, "+ 1e-6)", "+ 1e-5)")
    res = check(verifier, req(SEED_FIXED, new))
    assert res.verdict == "failed", res
    assert "norm-relative" in res.detail and "mode" in res.detail


def test_new_version_raising_fails(verifier):
    new = swap(HEAD, "y *= 0.5", "y = y * torch.ones(3)")
    res = check(verifier, req(HEAD, new))
    assert res.verdict == "failed", res
    assert res.detail.startswith("new version raises NameError")


def test_changed_helper_checked_through_its_module(verifier):
    src = """
    import torch, torch.nn as nn

    def halve(y):
        y *= 0.5
        return y

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 3)

        def forward(self, x):
            return halve(self.fc(x)).tanh()
    """
    res = check(verifier, req(src, swap(src, "y *= 0.5", "y = y * 0.5")))
    assert res.verdict == "equivalent", res
    assert res.unit == "Net"


def test_constructor_needs_arguments_then_fixture(verifier, tmp_path):
    src = swap(HEAD, "def __init__(self, d=8):", "def __init__(self, d, hidden):")
    new = swap(src, "y *= 0.5", "y = y * 0.5")
    res = check(verifier, req(src, new, root=str(tmp_path)))
    assert res.verdict == "untestable", res
    assert "constructor of Head needs arguments (d, hidden)" in res.detail
    assert "define fixture_Head(mod) in gradfix_fixtures.py returning (module, inputs)" in res.detail

    (tmp_path / "gradfix_fixtures.py").write_text(
        "import torch\n\n"
        "def fixture_Head(mod):\n"
        "    return mod.Head(8, 32), (torch.randn(4, 8),)\n"
    )
    res = check(verifier, req(src, new, root=str(tmp_path)))
    assert res.verdict == "equivalent", res


def test_input_shape_unknown(verifier):
    src = """
    import torch, torch.nn as nn

    class Raw(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(3, 2))

        def forward(self, x):
            y = x @ self.w
            y *= 2
            return y
    """
    res = check(verifier, req(src, swap(src, "y *= 2", "y = y * 2")))
    assert res.verdict == "untestable", res
    assert "input shape unknown for Raw" in res.detail and "fixture_Raw" in res.detail


def test_forward_with_several_inputs(verifier):
    """Every argument is tried with the shape inferred from the first layer; one that must be
    something else (a boolean mask) still needs a fixture."""
    src = """
    import torch, torch.nn as nn

    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(8, 8)
            self.b = nn.Linear(8, 8)

        def forward(self, x, y):
            h = torch.sigmoid(self.a(x))
            h *= self.b(y)
            return h.sum(-1)
    """
    res = check(verifier, req(src, swap(src, "h *= self.b(y)", "h = h * self.b(y)")))
    assert res.verdict == "fixes-crash", res
    assert res.unit == "Fusion"
    wrong = check(verifier, req(src, swap(src, "h *= self.b(y)", "h = h * self.b(x)")))
    assert wrong.verdict == "failed", wrong  # y and x differ: reading the wrong input is caught

    masked = swap(src, "def forward(self, x, y):", "def forward(self, x, mask):")
    masked = swap(masked, "h *= self.b(y)", "h *= self.b(x).masked_fill(mask, 0.0)")
    res = check(verifier, req(masked, swap(masked, "h *= self", "h = h * self")))
    assert res.verdict == "untestable", res
    assert "forward() takes 2 arguments (x, mask)" in res.detail and "fixture_Fusion" in res.detail


def test_module_level_code_is_not_executed(verifier, tmp_path):
    marker = tmp_path / "training_ran"
    main_marker = tmp_path / "main_ran"
    src = f"""
    import torch, torch.nn as nn
    MARKER = {str(marker)!r}

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            y = self.fc(x)
            y *= 3
            return y

    open(MARKER, "w").write("module-level code ran")
    net = Net()
    for step in range(10 ** 9):
        net(torch.randn(2, 4)).sum().backward()

    if __name__ == "__main__":
        open({str(main_marker)!r}, "w").write("main ran")
    """
    res = check(verifier, req(src, swap(src, "y *= 3", "y = y * 3")))
    assert res.verdict == "equivalent", res
    assert not marker.exists() and not main_marker.exists()


def test_change_in_module_level_code_is_untestable(verifier):
    new = swap(SCALE_LOOP, " / 1000000000", "")
    res = check(verifier, req(SCALE_LOOP, new))
    assert res.verdict == "untestable", res
    assert "module-level code" in res.detail


def test_module_not_importable(verifier):
    # an installed package without the name: not a missing package, so no stub (those: test_verify_env.py)
    src = "import torch\nfrom torch import no_such_name_gradfix\n\nclass A(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    res = check(verifier, req(src, src.replace("x * 2", "x * 3")))
    assert res.verdict == "untestable", res
    assert "module not importable in isolation" in res.detail and "no_such_name_gradfix" in res.detail


# --------------------------------------------------------------------------- contract "scale"


def test_scale_on_module_method(verifier):
    new = swap(SCALE_MODULE, " / 1000000000", "")
    res = check(verifier, req(SCALE_MODULE, new, {"kind": "scale", "factor": 1e9}, rule="GF201"))
    assert res.verdict == "fixes-hazard", res
    assert "gradients x1e+09 exactly as the removed factor says" in res.detail
    assert "below Adam's eps" in res.detail


def test_scale_wrong_factor_fails(verifier):
    new = swap(SCALE_MODULE, " / 1000000000", "")
    res = check(verifier, req(SCALE_MODULE, new, {"kind": "scale", "factor": 1e6}, rule="GF201"))
    assert res.verdict == "failed", res
    assert "not x1e+06" in res.detail


def test_scale_on_loss_expression(verifier):
    new = swap(SCALE_LOOP, " / 1000000000", "")
    contract = {"kind": "scale", "factor": 1e9, "expr_old": LOSS_OLD, "expr_new": LOSS_NEW, "opaque": [LOSS_NEW]}
    res, wrong = verifier.verify_many(
        [req(SCALE_LOOP, new, contract, rule="GF201"), req(SCALE_LOOP, new, dict(contract, factor=1e3), rule="GF201")]
    )
    assert res.verdict == "changes-behaviour", res  # the model did not run: no hazard shown
    assert res.unit == "<module-level loss expression>"
    assert "model and loss function were not run" in res.detail
    assert wrong.verdict == "failed", wrong


# --------------------------------------------------------------------------- clamp-moved, gains-grad


def test_clamp_moved_after_step(verifier):
    good, bad = verifier.verify_many(
        [req(SEED_FIXED, REG_NEW, clamp_contract(), rule="GF103"),
         req(SEED_FIXED, REG_NEW, clamp_contract(-2.0, 2.0), rule="GF103")]
    )
    assert good.verdict == "fixes-hazard", good
    assert "the original leaves" in good.detail
    assert "2 starts" in good.detail and "within [-1, 1]" in good.detail
    assert good.unit == "l2_sp_regularizer"
    assert bad.verdict == "failed", bad
    assert "outside [-1, 1]" in bad.detail


def test_clamp_moved_when_the_forward_itself_breaks_backward(verifier):
    # The raw seed: its forward's in-place divide breaks backward in both versions, so the steps
    # are compared with mutation of saved tensors allowed (the code's intended semantics).
    reg_new = swap(
        SEED,
        "    with torch.no_grad():\n        m.weight.data = torch.clamp(m.weight.data, -1.0, 1.0)\n    return",
        "    return",
    )
    res = check(verifier, req(SEED, reg_new, clamp_contract(), rule="GF103"))
    assert res.verdict == "fixes-hazard", res
    assert "mutation of saved tensors allowed" in res.detail
    assert "checked on CPU via cuda->cpu redirect" in res.detail


def test_gains_grad(verifier):
    new = swap(GAINS, "m.weight.data ** 2", "m.weight ** 2")
    contract = {"kind": "gains-grad", "setup": "model = Model()", "call": "reg(model.fc)", "model": "model"}
    res = check(verifier, req(GAINS, new, contract, rule="GF104"))
    assert res.verdict == "fixes-hazard", res
    assert "contributes gradient to fc.weight" in res.detail and "value is unchanged" in res.detail
    # an inline term in module-level code: the engine passes its old and new source
    loop = GAINS + "\nmodel = Model()\nfor step in range(10):\n    loss = model(torch.randn(2, 4)).sum() + (model.fc.weight.data ** 2).sum()\n"
    inline = {"kind": "gains-grad", "setup": "model = Model()", "model": "model", "call": None,
              "call_old": "(model.fc.weight.data ** 2).sum()", "call_new": "(model.fc.weight ** 2).sum()"}
    res = check(verifier, req(loop, swap(loop, "(model.fc.weight.data ** 2)", "(model.fc.weight ** 2)"), inline, rule="GF104"))
    assert res.verdict == "fixes-hazard" and res.unit == "<module-level loss term>", res
    # a rewrite that changes nothing about the gradient is not an expected change
    same = swap(GAINS, "m.weight.data ** 2", "m.weight.data.detach() ** 2")
    res = check(verifier, req(GAINS, same, contract, rule="GF104"))
    assert res.verdict == "failed", res


# --------------------------------------------------------------------------- isolation


def test_hang_times_out_and_next_request_works(fragile):
    src = """
    import torch.nn as nn

    class Hang(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            y *= 2
            return y
    """
    hang = swap(src, "y *= 2", "while True:\n                pass")
    res, after = fragile.verify_many([req(src, hang), req(HEAD, swap(HEAD, "y *= 0.5", "y = y * 0.5"))])
    assert res.verdict == "untestable" and "hit the CPU limit (2 s of CPU time" in res.detail, res
    assert after.verdict == "equivalent", after


def test_exit_and_print_do_not_break_the_worker(fragile):
    src = """
    import os, sys, torch.nn as nn

    class Loud(nn.Module):
        def __init__(self):
            super().__init__()
            print("constructing", flush=True)
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            print('{"id": 0, "result": {"verdict": "equivalent"}}')
            sys.stdout.flush()
            os.write(1, b"garbage on fd 1\\n")
            y = self.fc(x)
            y *= 2
            return y
    """
    loud_new = swap(src, "y *= 2", "y = y * 2")
    exiting = swap(src, "y *= 2", "os._exit(3)")
    r1, r2, r3 = fragile.verify_many([req(src, loud_new), req(src, exiting), req(src, loud_new)])
    assert r1.verdict == "equivalent", r1
    assert r2.verdict == "untestable" and "exited with status 3" in r2.detail, r2
    assert r3.verdict == "equivalent", r3


def test_worker_death_is_reported_and_worker_restarted(fragile):
    src = """
    import os, signal, torch.nn as nn

    class Killer(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            y *= 2
            return y
    """
    killer = swap(src, "y *= 2", "os.kill(os.getppid(), signal.SIGKILL)")
    dead, ok = fragile.verify_many([req(src, killer), req(HEAD, swap(HEAD, "y *= 0.5", "y = y * 0.5"))])
    assert dead.verdict == "untestable" and "worker" in dead.detail and "restarted" in dead.detail, dead
    assert ok.verdict == "equivalent", ok


# --------------------------------------------------------------------------- parent process


def _run_script(code: str, env: dict | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=str(REPO),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_parent_never_imports_torch():
    code = f"""
    import json, sys
    from gradfix.verify import Verifier, VerifyRequest
    src = {HEAD!r}
    with Verifier(jobs=1) as v:
        (res,) = v.verify_many([VerifyRequest("h.py", src, src.replace("y *= 0.5", "y = y * 0.5"), "GF101", 1, {{"kind": "equal"}})])
    print(json.dumps([res.verdict, "torch" in sys.modules]))
    """
    assert json.loads(_run_script(code)) == ["equivalent", False]


def test_torch_missing_in_worker(tmp_path):
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named torch (simulated)')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "fake"))
    code = f"""
    import json
    from gradfix.verify import Verifier, VerifyRequest
    src = {HEAD!r}
    with Verifier(jobs=1) as v:
        (res,) = v.verify_many([VerifyRequest("h.py", src, src, "GF101", 1, {{"kind": "equal"}})])
    print(json.dumps([res.verdict, res.detail]))
    """
    verdict, detail = json.loads(_run_script(code, env))
    assert verdict == "untestable" and detail.startswith(f"torch cannot be imported in {sys.executable} (No module "
                                                         "named torch (simulated)); install torch there"), detail


# --------------------------------------------------------------------------- static analysis (no torch)


def test_strip_keeps_defs_imports_and_constants():
    tree = __import__("ast").parse(textwrap.dedent(SEED))
    st = S.strip_module(tree)
    kinds = [type(s).__name__ for s in st.tree.body]
    assert kinds == ["Import", "ClassDef", "FunctionDef"]
    assert {"net", "opt", "scaler", "step"} <= st.dropped_names


def test_strip_runs_constants_computed_from_constants():
    import ast

    src = textwrap.dedent("""
    import string
    chars = "abcdefghijklmnopqrstuvwxyz 01"
    char_list = [c for c in chars if c != " "]
    n_letters = len(char_list)
    all_letters = string.ascii_letters + " .,"
    half = n_letters // 2 if n_letters > 2 else 1
    zero = 0
    broken = n_letters // zero
    after = n_letters + 1
    data = load()
    n_data = len(data)
    """)
    st = S.strip_module(ast.parse(src))
    ns: dict = {}
    exec(compile(st.tree, "<stripped>", "exec"), ns)  # a computed constant that raises leaves its name unset
    assert (ns["n_letters"], ns["half"], ns["after"], ns["all_letters"][-3:]) == (28, 14, 29, " .,")
    assert "broken" not in ns and "data" not in ns and "n_data" not in ns
    assert {"data", "n_data", "broken"} <= st.dropped_names
    # a shadowed builtin, a call of the file's own function that is not pure (it prints; pure_calls.py), or a
    # module that is not `string`/`math`: not run
    shadow = "def len(x):\n    print(x)\n    return 0\nchars = 'ab'\nn = len(chars)\nimport os\np = os.sep\n"
    kinds = [type(s).__name__ for s in S.strip_module(ast.parse(shadow)).tree.body]
    assert kinds == ["FunctionDef", "Assign", "Import"], kinds


def test_analyze_finds_changed_units():
    import ast

    a = CH.analyze(ast.parse(SEED), ast.parse(SEED_FIXED), SEED, SEED_FIXED)
    assert a.changed_classes == ["Net"] and not a.changed_functions and not a.module_code_changed
    assert a.changed_methods["Net"] == ["forward"]
    a = CH.analyze(ast.parse(SEED_FIXED), ast.parse(REG_NEW), SEED_FIXED, REG_NEW)
    assert a.changed_functions == ["l2_sp_regularizer"] and not a.changed_classes
    comment_only = SEED.replace("# [B, 16]", "# features")
    assert CH.analyze(ast.parse(SEED), ast.parse(comment_only), SEED, comment_only).identical


# --------------------------------------------------------------------------- harder cases, one batch


def test_edge_cases_batch(verifier):
    f32 = textwrap.dedent("""
    import torch, torch.nn as nn

    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x) @ torch.eye(3, dtype=torch.float32)
            y *= 2
            return y
    """)
    dropout = textwrap.dedent("""
    import torch, torch.nn as nn

    class D(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)
            self.d1, self.d2 = nn.Dropout(0.5), nn.Dropout(0.5)

        def forward(self, x):
            u = self.d1(self.a(x))
            v = self.d2(self.b(x))
            return u + v
    """)
    dropout_new = swap(dropout, "u = self.d1(self.a(x))\n        v = self.d2(self.b(x))",
                       "v = self.d2(self.b(x))\n        u = self.d1(self.a(x))")
    dropped = textwrap.dedent("""
    import torch, torch.nn as nn
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    config = load_config()

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4).to(device)

        def forward(self, x):
            y = self.fc(x.to(device)) * config["scale"]
            y *= 2
            return y
    """)
    gpu = textwrap.dedent("""
    import torch, torch.nn as nn

    class G(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.gen = torch.Generator("cuda")

        def forward(self, x):
            y = self.fc(x)
            y *= 2
            return y
    """)
    rnn = textwrap.dedent("""
    import torch, torch.nn as nn

    class T(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 8)
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.head = nn.Linear(16, 3)

        def forward(self, ids):
            h, _ = self.lstm(self.emb(ids))
            out = self.head(h[:, -1]).tanh()
            out /= 2
            return out

    class Lazy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.LazyLinear(5)

        def forward(self, x):
            y = self.fc(x)
            y += 1
            return y
    """)
    computed = textwrap.dedent("""
    import torch, torch.nn as nn
    chars = "abcdefghijklmnopqrstuvwxyz 01"
    char_list = [c for c in chars]
    n_letters = len(char_list)

    class C(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(n_letters, 4)

        def forward(self, x):
            y = self.fc(x).sigmoid()
            y *= 2
            return y
    """)
    broken_load = "import torch\n\nclass A(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    results = verifier.verify_many([
        req(f32, swap(f32, "y *= 2", "y = y * 2")),
        req(dropout, dropout_new),
        req(dropped, swap(dropped, "y *= 2", "y = y * 2")),
        req(gpu, swap(gpu, "y *= 2", "y = y * 2")),
        req(rnn, swap(swap(rnn, "out /= 2", "out = out / 2"), "y += 1", "y = y + 1")),
        req(broken_load, broken_load.replace("import torch\n", "import torch\nimport no_such_module_gradfix\n")),
        req(computed, swap(computed, "y *= 2", "y = y * 2")),
    ])
    weak, mixed, name, needs_gpu, two, broken, from_consts = results
    assert weak.verdict == "equivalent" and "Weak check: fp32" in weak.detail, weak
    assert mixed.verdict == "failed" and "(train mode)" in mixed.detail and "eval mode agrees" in mixed.detail, mixed
    assert name.verdict == "untestable" and "module-level name 'config'" in name.detail, name
    assert "fixture_M" in name.detail
    assert needs_gpu.verdict == "untestable" and needs_gpu.detail.startswith("needs GPU"), needs_gpu
    assert two.verdict == "fixes-crash" and two.unit == "T, Lazy", two
    assert broken.verdict == "failed" and "no_such_module_gradfix" in broken.detail, broken
    # `n_letters = len(char_list)` is computed at load, so the constructor runs: sigmoid's saved output was
    # written in place, the original crashes in backward
    assert from_consts.verdict == "fixes-crash", from_consts


# a sigmoid block in a sibling module and a net that writes its output in place, imported with `from {dots}layers`
_BLOCK = ("import torch.nn as nn\n\nclass Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x).sigmoid()\n")
_NET = """
    import torch.nn as nn
    from {dots}layers import Block

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            y = self.block(x)
            y *= 2
            return y
    """


def test_relative_imports_resolve_against_project_root(verifier, tmp_path):
    pkg = tmp_path / "pkg" / "models"
    pkg.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "layers.py").write_text(_BLOCK)
    src = _NET.format(dots=".")
    path = str(pkg / "net.py")
    new = swap(src, "y *= 2", "y = y * 2")
    loose = tmp_path / "loose" / "net.py"  # no __init__.py: no package to resolve `.layers` in
    loose.parent.mkdir()
    ok, alone, outside = verifier.verify_many([req(src, new, root=str(tmp_path), path=path), req(src, new, path=path),
                                               req(src, new, path=str(loose))])
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output, so the in-place *= broke backward
    assert alone.verdict == "fixes-crash", alone  # the package is found from the __init__.py chain alone
    assert outside.verdict == "untestable" and "module not importable in isolation" in outside.detail, outside
    assert "relative import" in outside.detail


def test_relative_import_above_the_package_takes_the_folders_as_namespace_packages(verifier, tmp_path):
    """`models/net.py` importing `from ..layers import Block` with `models/__init__.py` and no `__init__.py` in the
    project root: it works only where the checkout is imported from its parent folder, as a namespace package;
    relative imports name folders, so the verifier loads the same files and says what it assumed. Above the project
    root there is no such folder to take, and the import error stands."""
    root = tmp_path / "proj"
    (root / "models").mkdir(parents=True)
    (root / "models" / "__init__.py").write_text("")
    (root / "layers.py").write_text(_BLOCK)
    src = _NET.format(dots="..")
    new = swap(src, "y *= 2", "y = y * 2")
    path = str(root / "models" / "net.py")
    too_far = src.replace("from ..layers", "from ...layers")
    missing = src.replace("from ..layers", "from ..layerz")
    ok, beyond, absent = verifier.verify_many([
        req(src, new, root=str(root), path=path),
        req(too_far, swap(too_far, "y *= 2", "y = y * 2"), root=str(root), path=path),
        req(missing, swap(missing, "y *= 2", "y = y * 2"), root=str(root), path=path)])
    assert ok.verdict == "fixes-crash", ok
    assert "taken as namespace packages" in ok.detail, ok.detail
    assert beyond.verdict == "untestable" and "relative import" in beyond.detail, beyond
    # a module the import names that is not there: said so, without the verifier's own package name
    assert absent.verdict == "untestable" and "not in the project" in absent.detail, absent
    assert "_gradfix_ns_" not in absent.detail and "layerz" in absent.detail


def test_contract_modules_load_only_until_the_kind_is_found():
    """The first verdict of a module or scale check must not wait for libcst (checks_loop.py, about 0.5 s cold):
    `extra_checks(kind)` imports the checks_* modules only until one defines the kind, the loop checks last."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from gradfix.verify import checks\n"
        "assert 'scale' in checks.extra_checks('scale') and 'gains-grad' in checks.extra_checks('gains-grad')\n"
        "print('gradfix.verify.checks_loop' in sys.modules, 'libcst' in sys.modules)\n"
        "assert 'train-loop' in checks.extra_checks('train-loop')\n"
        "print('gradfix.verify.checks_loop' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "True"]
