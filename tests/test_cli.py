"""The command line as users run it: output lines, exit codes, diffs, writes, config."""

from __future__ import annotations

import codecs
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from samples import HEAD as INPLACE, run

ROOT = Path(__file__).resolve().parent.parent
SEED1 = ROOT / "golden" / "seeds" / "seed1_scenario.py"
SEED2 = ROOT / "golden" / "seeds" / "seed2_loop.py"

CLEAN = "import torch\n\n\ndef f(x):\n    return x * 2\n"


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "head.py").write_text(INPLACE)
    (tmp_path / "src" / "clean.py").write_text(CLEAN)
    return tmp_path


def test_check_lists_findings_and_exits_1(proj):
    r = run(["check", "src"], proj)
    assert r.exit_code == 1
    assert "src/head.py:12:9: GF101 in-place `/=` on `h`" in r.output
    assert r.output.splitlines()[0].endswith("[*]")
    assert "Found 1 finding in 1 file of 2 checked" in r.output  # files with findings, then files checked


def test_check_clean_exits_0(proj):
    r = run(["check", "src/clean.py"], proj)
    assert r.exit_code == 0
    assert "All checks passed" in r.output


def test_unparsable_file_reported_and_run_goes_on(proj):
    (proj / "src" / "broken.py").write_text("def f(:\n    pass\n")
    r = run(["check", "src", "--format", "json"], proj)
    assert r.exit_code == 3
    out = json.loads(r.stdout)
    assert out["errors"][0]["path"] == "src/broken.py"
    assert out["errors"][0]["line"] == 1
    assert [f["rule"] for f in out["findings"]] == ["GF101"]  # head.py still checked


def test_undecodable_file_names_line(proj):
    (proj / "src" / "latin.py").write_bytes(b"x = 1\ny = '\xff'\n")
    r = run(["check", "src", "--format", "json"], proj)
    out = json.loads(r.stdout)
    assert r.exit_code == 3
    assert out["errors"] == [{"path": "src/latin.py", "line": 2, "message": out["errors"][0]["message"]}]
    assert "utf-8" in out["errors"][0]["message"]


def test_json_keys_are_stable(proj):
    r = run(["check", "src", "--format", "json"], proj)
    out = json.loads(r.stdout)
    assert set(out) == {"findings", "errors"}
    f = out["findings"][0]
    assert set(f) == {"path", "line", "column", "end_line", "end_column", "rule", "name", "message", "fixable"}
    assert (f["line"], f["column"], f["end_line"], f["rule"], f["name"], f["fixable"]) == (
        12, 9, 12, "GF101", "inplace-on-activation", True)
    assert f["end_column"] == 9 + len("h /= h.norm(dim=1, keepdim=True) + 1e-6")


def test_select_and_ignore(proj):
    assert run(["check", "src", "--ignore", "GF101"], proj).exit_code == 0
    assert run(["check", "src", "--select", "GF2"], proj).exit_code == 0
    assert run(["check", "src", "--select", "GF1"], proj).exit_code == 1
    r = run(["check", "src", "--select", "GF999"], proj)
    assert r.exit_code == 2
    assert "unknown rule selector" in r.output


@pytest.mark.parametrize("comment", ["# gradfix: ignore[GF101]", "# gradfix: ignore", "# noqa: GF101",
                                     "# noqa: E501, GF101"])
def test_suppression_comments(proj, comment):
    path = proj / "src" / "head.py"
    path.write_text(INPLACE.replace("+ 1e-6", "+ 1e-6  " + comment))
    assert run(["check", "src"], proj).exit_code == 0


def test_suppression_of_other_rule_does_not_hide(proj):
    path = proj / "src" / "head.py"
    path.write_text(INPLACE.replace("+ 1e-6", "+ 1e-6  # gradfix: ignore[GF102]"))
    assert run(["check", "src"], proj).exit_code == 1


def test_config_in_pyproject(proj):
    (proj / "pyproject.toml").write_text('[tool.gradfix]\nignore = ["GF101"]\n')
    assert run(["check", "src"], proj).exit_code == 0
    (proj / "pyproject.toml").write_text('[tool.gradfix]\nexclude = ["src/head.py"]\n')
    assert run(["check", "src"], proj).exit_code == 0
    (proj / "pyproject.toml").write_text('[tool.gradfix]\nselect = "GF1"\nbogus = 1\n')
    r = run(["check", "src"], proj)
    assert r.exit_code == 2 and "bogus" in r.output


def test_gf201_threshold_option(tmp_path):
    src = ("import torch\n\nfor x, y in loader:\n    opt.zero_grad()\n    out = model(x)\n    loss = crit(out, y) / 500\n"
           "    loss.backward()\n    opt.step()\n")
    (tmp_path / "train.py").write_text(src)
    assert run(["check", "train.py"], tmp_path).exit_code == 0
    (tmp_path / "pyproject.toml").write_text("[tool.gradfix.rules.GF201]\nthreshold = 100\n")
    r = run(["check", "train.py"], tmp_path)
    assert r.exit_code == 1 and "GF201" in r.output
    (tmp_path / "pyproject.toml").write_text("[tool.gradfix.rules.GF201]\nthreshhold = 100\n")
    assert run(["check", "train.py"], tmp_path).exit_code == 2


def _diff(proj, *extra):
    r = run(["apply", "src", "--diff", "--no-verify", *extra], proj)
    return r


def test_diff_writes_nothing_and_applies_with_git_and_patch(proj, tmp_path):
    before = (proj / "src" / "head.py").read_text()
    r = _diff(proj)
    assert r.exit_code == 1
    assert (proj / "src" / "head.py").read_text() == before
    diff = r.stdout
    assert diff.startswith("diff --git a/src/head.py b/src/head.py\n--- a/src/head.py\n+++ b/src/head.py\n")
    assert "+        h = h / (h.norm(dim=1, keepdim=True) + 1e-6)\n" in diff
    # git apply
    g = tmp_path / "g"
    shutil.copytree(proj, g)
    subprocess.run(["git", "init", "-q"], cwd=g, check=True)
    subprocess.run(["git", "apply", "-"], cwd=g, input=diff.encode(), check=True)
    assert "h = h / (h.norm(dim=1, keepdim=True) + 1e-6)" in (g / "src" / "head.py").read_text()
    # patch -p1
    p = tmp_path / "p"
    shutil.copytree(proj, p)
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "-s"], cwd=p, input=diff.encode(), check=True)
        assert (p / "src" / "head.py").read_text() == (g / "src" / "head.py").read_text()


def test_diff_of_file_without_final_newline_round_trips(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "head.py").write_text(INPLACE.rstrip("\n"))
    r = _diff(tmp_path)
    assert "\\ No newline at end of file" in r.stdout
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=r.stdout.encode(), check=True)
    assert (tmp_path / "src" / "head.py").read_text().endswith("return h")


def test_apply_writes_and_second_run_is_clean(proj):
    r = run(["apply", "src", "--no-verify"], proj)
    assert r.exit_code == 0, r.output
    assert "h = h / (h.norm(dim=1, keepdim=True) + 1e-6)" in (proj / "src" / "head.py").read_text()
    assert run(["check", "src"], proj).exit_code == 0


def test_apply_keeps_crlf_bom_encoding_and_mode(tmp_path):
    text = INPLACE.replace("\n", "\r\n").replace("import torch\r\n", "import torch  # é\r\n", 1)
    path = tmp_path / "head.py"
    path.write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    os.chmod(path, 0o754)
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# \xe9t\xe9\n" + INPLACE).encode("latin-1"))
    r = run(["apply", ".", "--no-verify"], tmp_path)
    assert r.exit_code == 0, r.output
    data = path.read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    assert b"h = h / (h.norm(dim=1, keepdim=True) + 1e-6)\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert "# é" in data.decode("utf-8-sig")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o754
    ldata = latin.read_bytes()
    assert b"# \xe9t\xe9\n" in ldata and b"h = h / (" in ldata


def test_apply_refuses_file_changed_since_read(tmp_path, monkeypatch):
    from gradfix import sourcefile

    path = tmp_path / "head.py"
    path.write_text(INPLACE)
    real_write = sourcefile.SourceFile.write

    def racing_write(self, new_text):
        Path(self.path).write_text(INPLACE + "# edited meanwhile\n")
        return real_write(self, new_text)

    monkeypatch.setattr(sourcefile.SourceFile, "write", racing_write)
    r = run(["apply", ".", "--no-verify"], tmp_path)
    assert r.exit_code == 3
    assert "changed on disk" in r.output
    assert path.read_text() == INPLACE + "# edited meanwhile\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".gradfix-")]


def test_unsafe_fix_needs_flag_without_verification(tmp_path):
    src = INPLACE.replace("        h /= h.norm", "        skip = h\n        h /= h.norm").replace(
        "return h\n", "return h + skip\n")
    (tmp_path / "m.py").write_text(src)
    r = run(["apply", ".", "--no-verify", "--diff"], tmp_path)
    assert r.stdout == ""
    assert "not applied" in r.stderr and "--unsafe-fixes" in r.stderr
    assert r.exit_code == 1  # the finding remains
    r = run(["apply", ".", "--no-verify", "--unsafe-fixes", "--diff"], tmp_path)
    assert "+        h = h / (h.norm" in r.stdout


def test_walk_skips_venv_git_build_and_links_out(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text(INPLACE)
    proj = tmp_path / "proj"
    for d in (".git", ".venv", "build", "node_modules", "pkg"):
        (proj / d).mkdir(parents=True)
        (proj / d / "m.py").write_text(INPLACE)
    venv = proj / "myenv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    (venv / "m.py").write_text(INPLACE)
    os.symlink(outside / "o.py", proj / "pkg" / "link.py")
    os.symlink(outside, proj / "pkg" / "linkdir")
    r = run(["check", ".", "--format", "json"], proj)
    paths = sorted({f["path"] for f in json.loads(r.stdout)["findings"]})
    assert paths == ["pkg/m.py"]


def test_rule_docs(proj):
    r = run(["rule", "GF101"], proj)
    assert r.exit_code == 0
    for heading in ("# inplace-on-activation (GF101)", "## What it does", "## Why is this bad?", "## Example",
                    "## Fix", "## Fix safety", "## Verification"):
        assert heading in r.output
    listing = run(["rule"], proj).output
    ids = [l.split()[0] for l in listing.splitlines()]
    assert ids == sorted(ids)
    assert {"GF101", "GF102", "GF103", "GF104", "GF201"} <= set(ids)


def test_seeds_end_to_end(tmp_path):
    shutil.copy(SEED1, tmp_path / "seed1.py")
    shutil.copy(SEED2, tmp_path / "seed2.py")
    r = run(["check", ".", "--format", "json", "--select", "GF101,GF102,GF103,GF104,GF201"], tmp_path)
    got = [(f["path"], f["rule"]) for f in json.loads(r.stdout)["findings"]]
    assert got == [("seed1.py", "GF102"), ("seed1.py", "GF101"), ("seed1.py", "GF103"), ("seed2.py", "GF201")]


def _subprocess_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def test_check_does_not_import_torch(tmp_path):
    shutil.copy(SEED1, tmp_path / "seed1.py")
    code = ("import sys\nfrom gradfix.cli.main import main\n"
            "try:\n    main(['check', '.'])\nexcept SystemExit as e:\n    code = e.code\n"
            "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', code)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=_subprocess_env())
    assert out.stdout.strip().splitlines()[-1] == "NO-TORCH 1"


def test_console_script_and_python_m(tmp_path):
    (tmp_path / "m.py").write_text(INPLACE)
    exe = Path(sys.executable).with_name("gradfix")
    a = subprocess.run([str(exe), "check", "m.py"], cwd=tmp_path, capture_output=True, text=True)
    b = subprocess.run([sys.executable, "-m", "gradfix", "check", "m.py"], cwd=tmp_path, capture_output=True, text=True)
    assert a.returncode == b.returncode == 1
    assert a.stdout == b.stdout and "GF101" in a.stdout
