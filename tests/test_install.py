"""`pip install .` and `pip install -e .` both give `gradfix`, `gradfix.codemods`, `gradfix.cli`
and no top-level `cli` or `codemods` module, in a fresh virtual environment."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import importlib.util, json, sys
import gradfix, gradfix.codemods, gradfix.cli.main
print(json.dumps({
    "gradfix": gradfix.__file__,
    "rules": [r.id for r in gradfix.codemods.ALL_RULES],
    "top_cli": importlib.util.find_spec("cli") is not None,
    "top_codemods": importlib.util.find_spec("codemods") is not None,
}))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """One fresh virtual environment without pip of its own (this interpreter's pip installs into it
    with --python: bootstrapping pip into it was most of this test's time), for both installs."""
    venv = tmp_path_factory.mktemp("install") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    # Dependencies come from this interpreter's site-packages (no network needed);
    # the package itself is built and installed for real.
    deps = sysconfig.get_paths()["purelib"]
    (Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  text=True).strip()) / "deps.pth").write_text(deps + "\n")
    return venv


@pytest.mark.parametrize("editable", [False, True], ids=["install", "editable"])
def test_fresh_venv_install(tmp_path, venv, editable):
    py = venv / "bin" / "python"
    cmd = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps"]
    cmd += ["-e", str(ROOT)] if editable else [str(ROOT)]
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    build = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert build.returncode == 0, build.stderr[-2000:]
    out = subprocess.run([str(py), "-c", PROBE], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    import json

    info = json.loads(out.stdout)
    assert info["rules"][:5] == ["GF101", "GF102", "GF103", "GF104", "GF201"]
    assert info["top_cli"] is False and info["top_codemods"] is False
    if not editable:
        assert str(venv) in info["gradfix"]
    script = venv / "bin" / "gradfix"
    (tmp_path / "m.py").write_text("x = 1\n")
    run = subprocess.run([str(script), "check", "m.py"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert "All checks passed" in run.stdout
