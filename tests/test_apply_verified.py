"""`apply` and `check --verify` with the real verifier: the policy, the JSON, the summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from gradfix.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SEED1 = ROOT / "golden" / "seeds" / "seed1_scenario.py"
TRAP = ROOT / "golden" / "GF101" / "pos_alias_read_after.py"
NEEDS_ARGS = '''import torch
import torch.nn as nn


class L2Head(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 4)

    def forward(self, x):
        h = self.fc(x)
        h /= h.norm(dim=1, keepdim=True)
        return h
'''
SELECT = ["--select", "GF101,GF102,GF103,GF104,GF201"]


def run(args, cwd):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_apply_json_reports_each_change_with_its_verdict(tmp_path):
    shutil.copy(SEED1, tmp_path / "seed1.py")
    shutil.copy(TRAP, tmp_path / "trap.py")
    r = run(["apply", ".", "--diff", "--format", "json", *SELECT], tmp_path)
    out = json.loads(r.stdout)
    assert set(out) >= {"changes", "findings", "errors"}
    for c in out["changes"]:
        assert set(c) >= {"path", "line", "rule", "verdict", "detail", "unit", "applied"}
    got = {(c["path"], c["line"], c["rule"]): (c["verdict"], c["applied"]) for c in out["changes"]}
    assert got[("seed1.py", 18, "GF101")] == ("fixes-crash", True)
    assert got[("seed1.py", 30, "GF103")] == ("fixes-hazard", True)
    # GF102 is untestable while GF101's crash is in the code; once GF101 is fixed its hazard is gone too
    assert ("seed1.py", 15, "GF102") not in got
    assert not [f for f in out["findings"] if f["path"] == "seed1.py"]
    assert got[("trap.py", 17, "GF101")][0] == "failed" and got[("trap.py", 17, "GF101")][1] is False
    assert "+        f = f / (f.norm(dim=1, keepdim=True) + 1e-6)" in out["diff"]
    assert "trap.py" not in out["diff"]
    # nothing written with --diff
    assert (tmp_path / "seed1.py").read_bytes() == SEED1.read_bytes()


BOTH = """import torch
import torch.nn as nn


class Colorizer(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.fc = nn.Linear(dim, 12)
        self.gate = nn.Linear(dim, 12)
        self.previews = []

    def forward(self, x):
        out = self.fc(x)
        vis = out.detach()
        vis.clamp_(0, 1)
        self.previews.append(vis)
        g = torch.sigmoid(self.gate(x))
        g *= 2
        return torch.tanh(out) * g
"""


def test_untestable_change_is_verified_again_once_a_crash_is_fixed(tmp_path):
    """GF102 cannot be compared while GF101's in-place op makes both versions raise; a verdict
    holds for the source of its round, so after GF101 is applied GF102 is verified again."""
    (tmp_path / "both.py").write_text(BOTH)
    r = run(["apply", ".", "--diff", "--format", "json"], tmp_path)
    out = json.loads(r.stdout)
    got = {(c["line"], c["rule"]): (c["verdict"], c["applied"]) for c in out["changes"]}
    assert got == {(18, "GF101"): ("fixes-crash", True), (14, "GF102"): ("fixes-hazard", True)}
    assert "+        vis = out.detach().clone()" in out["diff"] and "+        g = g * 2" in out["diff"]
    assert out["findings"] == []


def test_apply_writes_verified_changes_and_leaves_the_trap(tmp_path):
    shutil.copy(SEED1, tmp_path / "seed1.py")
    shutil.copy(TRAP, tmp_path / "trap.py")
    r = run(["apply", ".", *SELECT], tmp_path)
    assert r.exit_code == 1  # the trap's finding remains
    assert (tmp_path / "trap.py").read_bytes() == TRAP.read_bytes()
    fixed = (tmp_path / "seed1.py").read_text()
    assert "f = f / (f.norm(dim=1, keepdim=True) + 1e-6)" in fixed
    assert "        net.fc.weight.clamp_(-1.0, 1.0)\n" in fixed
    assert "m.weight.data = torch.clamp" not in fixed
    assert "trap.py:17: GF101 not applied [failed]: verification failed" in r.output


def test_untestable_needs_allow_untestable_and_fixture_makes_it_testable(tmp_path):
    (tmp_path / "head.py").write_text(NEEDS_ARGS)
    r = run(["apply", ".", "--diff"], tmp_path)
    assert r.stdout == ""
    assert "[untestable]" in r.stderr and "fixture_L2Head" in r.stderr and "--allow-untestable" in r.stderr
    r = run(["apply", ".", "--diff", "--allow-untestable"], tmp_path)
    assert "+        h = h / h.norm(dim=1, keepdim=True)" in r.stdout
    (tmp_path / "gradfix_fixtures.py").write_text(
        "import torch\n\n\ndef fixture_L2Head(mod):\n    return mod.L2Head(8), (torch.randn(4, 8),)\n")
    r = run(["apply", "head.py", "--diff"], tmp_path)
    assert "+        h = h / h.norm(dim=1, keepdim=True)" in r.stdout
    assert "[fixes-crash]" in r.stderr


def test_check_verify_shows_verdicts_and_writes_nothing(tmp_path):
    shutil.copy(SEED1, tmp_path / "seed1.py")
    r = run(["check", "seed1.py", "--verify", *SELECT], tmp_path)
    assert r.exit_code == 1
    assert "verification: fixes-crash" in r.output
    assert "verification: fixes-hazard" in r.output
    assert (tmp_path / "seed1.py").read_bytes() == SEED1.read_bytes()
    r = run(["check", "seed1.py", "--verify", "--format", "json", *SELECT], tmp_path)
    verdicts = {f["rule"]: f["verdict"] for f in json.loads(r.stdout)["findings"]}
    assert verdicts == {"GF101": "fixes-crash", "GF102": "untestable", "GF103": "fixes-hazard"}


DEMO_FILES = ["examples/triplet_embedding.py", "examples/gradfix_fixtures.py", "examples/pyproject.toml",
              "golden/seeds/seed1_scenario.py", "examples/seed2_training.py"]


def test_demo_project_is_clean_after_one_default_apply(tmp_path):
    """`make demo` steps 3 and 4 on the files examples/demo.sh copies: a default `apply` takes every fix
    (seed2's GF201 is fixes-hazard on the script's own model and optimizer), and `check` then passes."""
    demo = (ROOT / "examples" / "demo.sh").read_text()
    assert all(f in demo for f in DEMO_FILES)
    for f in DEMO_FILES:
        shutil.copy(ROOT / f, tmp_path / Path(f).name)
    r = run(["apply", "."], tmp_path)
    assert r.exit_code == 0, r.output
    assert "seed2_training.py:50: GF201 remove the 1e+09 loss scale [fixes-hazard]" in r.output
    assert "0 not applied; 0 findings remain." in r.output
    r = run(["check", "."], tmp_path)
    assert (r.exit_code, r.output.strip()) == (0, "All checks passed (3 files)."), r.output
