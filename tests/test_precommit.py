"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit in a temporary git repository.

No network: the manifest is validated by pre-commit itself, and its hooks are run as `repo: local`
hooks with the same entry and file types, the executable taken from this environment (a `python`
hook would make pre-commit build a fresh environment from the registry)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from samples import HEAD

pytest.importorskip("pre_commit")
yaml = pytest.importorskip("yaml")  # pre-commit depends on PyYAML

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
EXE = Path(sys.executable).with_name("gradfix")
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]



def _run(args, cwd, env):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("precommit")
    env = dict(os.environ, PRE_COMMIT_HOME=str(root / "cache"), GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CONFIG_NOSYSTEM="1", NO_COLOR="1")
    work = root / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True, env=env)
    hooks = yaml.safe_load(MANIFEST.read_text())
    local = []
    for hook in hooks:
        assert hook["entry"].split()[0] == "gradfix"
        entry = {**hook, "entry": " ".join([str(EXE), *hook["entry"].split()[1:]]), "language": "system"}
        if hook["id"] == "gradfix-fix":
            # what a user's `args:` adds; it spares this test the verifier's start-up (torch import,
            # seconds on a loaded machine); the verified path is covered by tests/test_apply_verified.py
            entry["args"] = ["--no-verify"]
        local.append(entry)
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    (work / "model.py").write_text(HEAD)
    (work / "notes.txt").write_text("h /= 2\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)
    return work, env, hooks


def test_manifest_is_valid(repo):
    work, env, hooks = repo
    r = _run([*PRE_COMMIT, "validate-manifest", str(MANIFEST)], work, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [h["id"] for h in hooks] == ["gradfix", "gradfix-fix"]


def test_check_hook_fails_then_fix_hook_rewrites_then_both_pass(repo):
    work, env, _ = repo
    r = _run([*PRE_COMMIT, "run", "gradfix", "--all-files"], work, env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "model.py:12:9: GF101" in r.stdout
    assert (work / "model.py").read_text() == HEAD          # the check hook changes nothing

    r = _run([*PRE_COMMIT, "run", "gradfix-fix", "--all-files"], work, env)
    assert r.returncode == 1                                 # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in r.stdout, r.stdout
    assert "h = h / (h.norm(dim=1, keepdim=True) + 1e-6)" in (work / "model.py").read_text()
    assert "model.py:12: GF101 rewrite as" in r.stdout
    assert (work / "notes.txt").read_text() == "h /= 2\n"   # not a Python file: not passed to the hooks

    r = _run([*PRE_COMMIT, "run", "--all-files"], work, env)
    assert r.returncode == 0, r.stdout + r.stderr
