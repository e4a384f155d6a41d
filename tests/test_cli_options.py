"""Ruff-style options and the promises of the summary lines: --statistics, --show-fixes,
--exit-zero, --exit-non-zero-on-fix, standard input, ALL, rule names, per-file ignores, config
errors, the lsp extra, symlink loops, unwritten files and Ctrl-C during apply."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradfix.engine import Engine
from samples import HEAD, run

FIXED_LINE = "        h = h / (h.norm(dim=1, keepdim=True) + 1e-6)\n"
SCALE = "def step(loss):\n    loss = loss / 1e9\n    loss.backward()\n"




@pytest.fixture
def proj(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "src" / "head.py").write_text(HEAD)
    (tmp_path / "src" / "other.py").write_text(HEAD)
    (tmp_path / "tests" / "test_head.py").write_text(HEAD)
    (tmp_path / "src" / "clean.py").write_text("x = 1\n")
    return tmp_path


def test_summary_counts_files_with_findings(proj):
    r = run(["check", "src"], proj)
    assert "Found 2 findings in 2 files of 3 checked" in r.stdout


def test_statistics(proj):
    r = run(["check", ".", "--statistics"], proj)
    assert r.stdout == "3\tGF101\t[*] inplace-on-activation\n"
    assert r.exit_code == 1


def test_exit_zero_turns_findings_but_not_errors_into_0(proj):
    assert run(["check", "src", "--exit-zero"], proj).exit_code == 0
    (proj / "src" / "broken.py").write_text("def f(:\n")
    assert run(["check", "src", "--exit-zero"], proj).exit_code == 3


def test_exit_non_zero_on_fix(proj):
    assert run(["apply", "src/head.py", "--no-verify"], proj).exit_code == 0
    (proj / "src" / "head.py").write_text(HEAD)
    r = run(["apply", "src/head.py", "--no-verify", "--exit-non-zero-on-fix"], proj)
    assert r.exit_code == 1
    assert FIXED_LINE in (proj / "src" / "head.py").read_text()
    # nothing left to change: 0 again
    assert run(["apply", "src/head.py", "--no-verify", "--exit-non-zero-on-fix"], proj).exit_code == 0


def test_show_fixes(proj):
    r = run(["apply", "src", "--no-verify", "--show-fixes"], proj)
    out = r.stdout
    assert "Fixed 2 findings:" in out
    assert "  src/head.py:\n    1 × GF101 (inplace-on-activation)\n  src/other.py:\n" in out


def test_check_stdin_uses_the_stdin_filename_for_output_and_config(proj):
    (proj / "pyproject.toml").write_text('[tool.gradfix]\nper-file-ignores = {"tests/*" = ["GF101"]}\n')
    r = run(["check", "-", "--stdin-filename", "src/new.py"], proj, input=HEAD)
    assert r.stdout.startswith("src/new.py:12:9: GF101")
    assert r.exit_code == 1
    r = run(["check", "-", "--stdin-filename", "tests/test_new.py"], proj, input=HEAD)
    assert r.exit_code == 0, r.output


def test_apply_stdin_prints_the_fixed_source(proj):
    r = run(["apply", "-", "--no-verify", "--stdin-filename", "model.py"], proj, input=HEAD)
    assert r.stdout == HEAD.replace("        h /= h.norm(dim=1, keepdim=True) + 1e-6\n", FIXED_LINE)
    assert "model.py:12: GF101" in r.stderr
    assert not (proj / "-").exists() and not (proj / "model.py").exists()
    r = run(["apply", "-", "--no-verify", "--diff"], proj, input=HEAD)
    assert r.stdout.startswith("diff --git a/- b/-")


def test_all_selector(proj):
    assert run(["check", "src", "--select", "ALL"], proj).exit_code == 1
    assert run(["check", "src", "--ignore", "ALL"], proj).exit_code == 0
    (proj / "pyproject.toml").write_text('[tool.gradfix]\nselect = ["ALL"]\nignore = ["GF1"]\n')
    assert run(["check", "src"], proj).exit_code == 0


def test_rule_by_name_or_id(proj):
    by_name = run(["rule", "inplace-on-activation"], proj)
    assert by_name.exit_code == 0
    assert by_name.stdout.startswith("# inplace-on-activation (GF101)")
    assert by_name.stdout == run(["rule", "gf101"], proj).stdout
    r = run(["rule", "no-such-rule"], proj)
    assert r.exit_code == 2 and "unknown rule 'no-such-rule'" in r.output


def test_per_file_ignores(proj):
    (proj / "pyproject.toml").write_text('[tool.gradfix]\nper-file-ignores = {"tests/*" = ["GF101"], '
                                         '"other.py" = ["ALL"]}\n')
    r = run(["check", ".", "--output-format", "concise"], proj)
    assert [line.split(":")[0] for line in r.stdout.splitlines()[:-1]] == ["src/head.py"]
    # apply honours them too: the ignored files are left alone
    run(["apply", ".", "--no-verify"], proj)
    assert (proj / "tests" / "test_head.py").read_text() == HEAD
    assert (proj / "src" / "other.py").read_text() == HEAD
    assert FIXED_LINE in (proj / "src" / "head.py").read_text()


@pytest.mark.parametrize("body, words", [
    ('per-file-ignores = ["tests/*"]', "per-file-ignores must be a table"),
    ('per-file-ignores = {"tests/*" = ["GF999"]}', "unknown rule selector 'GF999'"),
    ('[tool.gradfix.rules.GF201]\nthreshold = "big"', "option 'threshold' must be a number"),
    ('[tool.gradfix.rules.GF201]\nthreshold = true', "option 'threshold' must be a number"),
])
def test_bad_config_is_exit_2_naming_the_key(proj, body, words):
    (proj / "src" / "scale.py").write_text(SCALE)
    head = "" if body.startswith("[") else "[tool.gradfix]\n"
    (proj / "pyproject.toml").write_text(head + body + "\n")
    r = run(["check", "src"], proj)
    assert r.exit_code == 2, r.output
    assert words in r.output and "pyproject.toml" in r.output


def test_numeric_option_still_works(proj):
    (proj / "src" / "scale.py").write_text(SCALE)
    (proj / "pyproject.toml").write_text("[tool.gradfix.rules.GF201]\nthreshold = 1e10\n")
    assert run(["check", "src/scale.py"], proj).exit_code == 0
    (proj / "pyproject.toml").write_text("[tool.gradfix.rules.GF201]\nthreshold = 1000\n")
    assert run(["check", "src/scale.py"], proj).exit_code == 1


def test_lsp_without_the_extra_says_how_to_install(proj, monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)
    r = run(["lsp"], proj)
    assert r.exit_code == 2
    assert "pip install 'gradfix[lsp]'" in r.stderr


def test_lsp_help_names_editor_versions(proj):
    out = run(["lsp", "--help"], proj).stdout
    assert "Neovim 0.8 or newer" in out and "0.7" in out


def test_symlink_loop_is_reported_as_one(proj):
    loop = proj / "src" / "loop.py"
    os.symlink("loop.py", loop)
    for target in ("src", "src/loop.py"):
        r = run(["check", target, "--output-format", "json"], proj)
        assert r.exit_code == 3
        assert "src/loop.py: error: symbolic link loop" in r.stderr or '"symbolic link loop' in r.stdout, r.output
    broken = proj / "src" / "gone.py"
    os.symlink("nowhere.py", broken)
    assert "broken symbolic link to 'nowhere.py'" in run(["check", "src/gone.py"], proj).stderr


def test_unwritten_file_is_not_counted_as_fixed(proj, monkeypatch):
    from gradfix import sourcefile

    def refuse(self, text):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sourcefile.SourceFile, "write", refuse)
    r = run(["apply", "src/head.py", "--no-verify"], proj)
    assert r.exit_code == 3
    assert "0 findings remain" not in r.stdout
    assert "Applied 0 changes in 0 files; 1 not applied; 1 finding remains (1 file could not be written)." in r.stdout
    assert "not written" in r.stderr


def _interrupt_at(monkeypatch, n: int) -> list[str]:
    """Ctrl-C when the engine starts fixing the n-th file (files go in sorted order; a file with
    no fixable finding, like clean.py, is not parsed again)."""
    real = Engine.fix_source
    calls: list[str] = []

    def fix_source(self, source, path, *a, **kw):
        calls.append(path)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(self, source, path, *a, **kw)

    monkeypatch.setattr(Engine, "fix_source", fix_source)
    return calls


def test_ctrl_c_during_apply_before_any_write(proj, monkeypatch):
    calls = _interrupt_at(monkeypatch, 1)
    r = run(["apply", "src", "--no-verify"], proj)
    assert r.exit_code == 130
    assert calls == ["src/head.py"]
    assert "interrupted: no file was written" in r.stderr
    assert (proj / "src" / "head.py").read_text() == HEAD


def test_ctrl_c_during_apply_says_what_was_written(proj, monkeypatch):
    calls = _interrupt_at(monkeypatch, 2)
    r = run(["apply", "src", "--no-verify"], proj)
    assert r.exit_code == 130
    assert calls == ["src/head.py", "src/other.py"]
    assert "interrupted: 1 file had been written (each completely, atomically); no other file was changed:\n" \
           "  src/head.py\n" in r.stderr
    assert FIXED_LINE in (proj / "src" / "head.py").read_text()
    assert (proj / "src" / "other.py").read_text() == HEAD
    assert not [p for p in (proj / "src").iterdir() if p.name.startswith(".gradfix-")]


def test_apply_summary_says_what_each_verdict_shown_means(proj):
    out = run(["apply", "src/head.py", "--no-verify"], proj).stdout
    assert "Verdicts:\n  not-verified: --no-verify: only fixes marked safe are applied" in out
    assert "equivalent:" not in out   # only the verdicts that occurred


def test_make_demo_runs_the_four_steps_without_make_noise(tmp_path):
    """The demo's sequence and exit-status lines, with a stand-in gradfix that records its calls
    (the real run takes tens of seconds; it is what `make demo` shows)."""
    root = Path(__file__).resolve().parent.parent
    stamp = root / ".venv" / ".gradfix-installed"
    if not shutil.which("make") or not stamp.exists() or stamp.stat().st_mtime < (root / "pyproject.toml").stat().st_mtime:
        pytest.skip("needs make and an up-to-date .venv (the demo would install it first)")
    log = tmp_path / "calls"
    fake = tmp_path / "gradfix"
    # findings at the first check and for both diffs; the check after `apply` is clean
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\ncase $(wc -l < {log}) in 1|2|5) exit 1;; esac\n')
    fake.chmod(0o755)
    r = subprocess.run(["make", "demo", f"DEMO_GRADFIX={fake}", f"DEMO_DIR={tmp_path / 'demo'}"], cwd=root,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert log.read_text().splitlines() == ["check .", "apply --diff .", "apply .", "check .",
                                            "apply --diff residual_alias.py"]
    assert "Error" not in r.stdout + r.stderr and "ignored" not in r.stdout + r.stderr
    assert "pip" not in r.stdout + r.stderr and "Setting up" not in r.stdout
    assert [l for l in r.stdout.splitlines() if l.startswith("(exit")] == [
        "(exit 1: findings reported)", "(exit 1: a diff was printed)", "(exit 0: clean)", "(exit 0: clean)",
        "(exit 1: the refused finding remains)"]
    # step 4 is the check after apply: the demo says nothing is left, and its status line says clean
    # (that the real run is clean: test_apply_verified.test_demo_project_is_clean_after_one_default_apply)
    step4 = r.stdout.split("== 4. ")[1].split("== 5. ")[0]
    assert step4.startswith("check again: nothing is left") and step4.rstrip().endswith("(exit 0: clean)"), step4
