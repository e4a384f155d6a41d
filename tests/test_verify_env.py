"""The verifier on real project layouts, in the project's interpreter, contained (issue 12, items 5-9).

Real workers, real torch, no mocks. One contained Verifier (small limits) serves most tests; the
project-venv test starts a second one in a virtual environment made here (no network needed:
a .pth file lends it gradfix's torch, and it holds a package gradfix's own environment lacks).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import Verifier, VerifyRequest
from gradfix.verify.environment import Containment, Interpreter, resolve_python
from gradfix.verify.sandbox import import_paths, package_root

pytest.importorskip("torch")

SECRET = "GRADFIX_TEST_SECRET_TOKEN"

# The rewrite of GF101: the original breaks backward (sigmoid's output modified in place).
MODEL = '''
import torch
import torch.nn as nn
{imports}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        {body}
        f = self.fc(x).sigmoid()
        f /= 2
        return f
'''


def model(body: str = "pass", imports: str = "") -> tuple[str, str]:
    src = textwrap.dedent(MODEL).format(imports=imports, body=body)
    return src, src.replace("f /= 2", "f = f / 2")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project folder; the engine (and so the Verifier) runs with it as working directory."""
    root = tmp_path_factory.mktemp("proj")
    old = os.getcwd()
    os.environ[SECRET] = "s3cr3t"
    os.chdir(root)
    try:
        yield root
    finally:
        os.chdir(old)
        os.environ.pop(SECRET, None)


@pytest.fixture(scope="module")
def verifier(project):
    with Verifier(jobs=1, timeout_s=30.0, containment=Containment(memory_mb=1024, cpu_s=1)) as v:
        yield v


def check(v: Verifier, path: Path, original: str, rewritten: str, root: Path | None):
    (res,) = v.verify_many([VerifyRequest(str(path), original, rewritten, "GF101", 1, {"kind": "equal"},
                                          project_root=str(root) if root else None)])
    return res


# --------------------------------------------------------------------------- containment


def test_file_written_by_checked_code_stays_out_of_the_project(verifier, project):
    src, new = model('open("written_by_check.txt", "w").write(str(__import__("os").getcwd()))')
    path = write(project / "net.py", src)
    res = check(verifier, path, src, new, project)
    assert res.verdict == "fixes-crash", res
    assert not list(project.rglob("written_by_check.txt"))
    assert not list(project.rglob("__pycache__"))
    scratch = verifier._scratch
    assert scratch and not str(scratch).startswith(str(project))
    assert not list(Path(scratch).rglob("written_by_check.txt"))  # the check's folder was removed


def test_environment_is_stripped_and_network_blocked(verifier, project):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    body = textwrap.dedent(f'''
        import os, socket
        if os.environ.get({SECRET!r}):
            raise RuntimeError("secret visible")
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
            raise RuntimeError("network reachable")
        except OSError:
            pass
    ''').strip().replace("\n", "\n        ")
    src, new = model(body)
    res = check(verifier, write(project / "net_env.py", src), src, new, project)
    network = verifier.info.get("network", "")
    assert "secret visible" not in res.detail
    assert res.verdict == "fixes-crash" or (network.startswith("not blocked") and "reachable" in res.detail), res
    if network.startswith("blocked"):
        with pytest.raises(socket.timeout):
            server.accept()
    else:
        assert "network not blocked" in res.detail
    server.close()


def test_memory_limit_hit_is_reported_as_such(verifier, project):
    src, new = model("torch.zeros(2 ** 31)  # 16 GB in float64")
    res = check(verifier, write(project / "net_mem.py", src), src, new, project)
    assert res.verdict == "untestable", res
    assert "memory limit (1024 MB" in res.detail and "fixture" not in res.detail


def test_cpu_limit_hit_is_reported_as_such(verifier, project):
    src, new = model("while True: pass")
    res = check(verifier, write(project / "net_cpu.py", src), src, new, project)
    assert res.verdict == "untestable", res
    assert "CPU limit (1 s" in res.detail and "crashed" not in res.detail


# --------------------------------------------------------------------------- the project's own modules


def test_src_layout_package_with_relative_imports_gets_a_verdict(verifier, project):
    pkg = project / "src" / "mypkg"
    write(pkg / "__init__.py", "from .layers import HALF\n")
    # module-level code that is not an import, definition or constant is skipped, as in the checked file
    write(pkg / "layers.py", '''
        HALF = 2
        def halve(t):
            return t / HALF
        raise RuntimeError("module-level code of a local module ran")
    ''')
    write(pkg / "utils" / "__init__.py", "def ident(t):\n    return t\n")
    src, new = model(imports="from ..layers import halve\nfrom mypkg.utils import ident", body="x = ident(halve(x))")
    path = write(pkg / "models" / "net.py", src)
    write(pkg / "models" / "__init__.py", "")
    res = check(verifier, path, src, new, project)
    assert res.verdict == "fixes-crash", res


def test_name_set_by_skipped_code_of_a_local_module_is_explained(verifier, project):
    write(project / "cfgmod.py", "import torch\nSCALE = torch.tensor(2.0)\n")
    src, new = model(imports="from cfgmod import SCALE", body="x = x * SCALE")
    res = check(verifier, write(project / "net_cfg.py", src), src, new, project)
    assert res.verdict == "untestable", res
    assert "'SCALE' is set by module-level code of cfgmod" in res.detail


def test_import_roots_follow_the_package_chain(tmp_path):
    f = write(tmp_path / "repo" / "projA" / "src" / "pa" / "sub" / "m.py", "")
    write(f.parent / "__init__.py", "")
    write(f.parent.parent / "__init__.py", "")
    extra = tmp_path / "vendor"
    extra.mkdir()
    assert package_root(str(f)) == (str(f.parent.parent.parent), "pa.sub")
    root = tmp_path / "repo"
    (root / "src").mkdir()
    assert import_paths(str(f), str(root), [str(extra)]) == [
        str(extra), str(f.parent.parent.parent), str(f.parent), str(root / "src"), str(root)]


# --------------------------------------------------------------------------- stubs


def test_missing_package_the_unit_does_not_use_is_stubbed(verifier, project):
    imports = "import gf_absent_plotting as plt\nfrom gf_absent_codec.io import imread\nimport gf_absent_log.sub"
    src, new = model(imports=imports)
    src += "\ndef show(t):\n    plt.imshow(imread(t))\n"
    new += "\ndef show(t):\n    plt.imshow(imread(t))\n"
    res = check(verifier, write(project / "net_stub.py", src), src, new, project)
    assert res.verdict == "fixes-crash", res
    assert "Stubbed imports the unit does not use: gf_absent_codec, gf_absent_log, gf_absent_plotting" in res.detail


def test_missing_package_the_unit_touches_is_untestable_naming_it(verifier, project):
    src, new = model(imports="import gf_absent_aug as aug", body="x = aug.jitter(x)")
    res = check(verifier, write(project / "net_touch.py", src), src, new, project)
    assert res.verdict == "untestable", res
    assert "gf_absent_aug (gf_absent_aug.jitter)" in res.detail and "not installed in" in res.detail


# --------------------------------------------------------------------------- the project's interpreter


def _fake_venv(where: Path) -> Path:
    (where / "bin").mkdir(parents=True)
    (where / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (where / "bin" / "python").symlink_to(sys.executable)
    return where / "bin" / "python"


def test_interpreter_resolution_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proj_venv = _fake_venv(tmp_path / "p" / ".venv")
    active = _fake_venv(tmp_path / "active")
    given = _fake_venv(tmp_path / "given")
    conf = _fake_venv(tmp_path / "conf")
    env = {"VIRTUAL_ENV": str(active.parent.parent)}
    proj = str(tmp_path / "p")
    assert resolve_python(str(given), str(conf), None, proj, env) == Interpreter(str(given), "--python")
    assert resolve_python(None, str(conf), None, proj, env).how == "[tool.gradfix] python"
    assert resolve_python(None, None, None, proj, env) == Interpreter(str(active), "active VIRTUAL_ENV")
    assert resolve_python(None, None, None, proj, {}) == Interpreter(str(proj_venv), "the project's .venv")
    assert resolve_python(None, None, None, str(tmp_path), {}).how == "gradfix's own interpreter"
    assert resolve_python(str(given.parent.parent), None, None, None, {}).path == str(given)  # a venv folder


def test_project_venv_with_a_package_gradfix_lacks_gets_a_verdict(tmp_path):
    base = getattr(sys, "_base_executable", sys.executable)
    venv = tmp_path / ".venv"
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # torch comes from gradfix's environment through a .pth; gradfix itself does not
    (Path(site) / "lend_torch.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    write(Path(site) / "gf_projdep" / "__init__.py", "def twice(t):\n    return t * 2\n")
    assert subprocess.run([str(py), "-c", "import gradfix"], capture_output=True).returncode != 0
    with pytest.raises(ImportError):
        __import__("gf_projdep")
    python = resolve_python(project_root=str(tmp_path), environ={})
    assert python.path == str(py) and python.how == "the project's .venv"
    src, new = model(imports="import gf_projdep", body="x = gf_projdep.twice(x)")
    path = write(tmp_path / "net.py", src)
    with Verifier(jobs=1, timeout_s=30.0, python=python) as v:
        res = check(v, path, src, new, tmp_path)
    assert res.verdict == "fixes-crash", res
    assert f"ran with {py} (the project's .venv)" in res.detail


# --------------------------------------------------------------------------- fixtures


def test_fixture_is_found_in_the_files_folder_and_the_message_says_where(verifier, project):
    src, new = model()
    src = src.replace("def __init__(self):", "def __init__(self, width):")
    new = new.replace("def __init__(self):", "def __init__(self, width):")
    path = write(project / "exp" / "deep" / "net_args.py", src)
    res = check(verifier, path, src, new, project)
    assert res.verdict == "untestable", res
    assert "gradfix_fixtures.py is looked for in exp/deep/, exp/, the project root" in res.detail
    write(project / "exp" / "gradfix_fixtures.py", '''
        import torch
        def fixture_Net(mod):
            return mod.Net(width=3), (torch.randn(4, 4),)
    ''')
    res = check(verifier, path, src, new, project)
    assert res.verdict == "fixes-crash", res


# --------------------------------------------------------------------------- options


def test_bad_interpreter_and_config_are_usage_errors(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from gradfix.cli.main import main
    from gradfix.config import load_config

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "m.py", "import torch\nx = torch.zeros(3).data\n")
    r = CliRunner().invoke(main, ["check", "--verify", "--python", str(tmp_path / "nope"), "m.py"])
    assert r.exit_code == 2 and "--python" in r.output and "not an executable python interpreter" in r.output
    r = CliRunner().invoke(main, ["apply", "--diff", "--root", "missing_dir", "m.py"])
    assert r.exit_code == 2 and "'missing_dir' is not a folder" in r.output
    write(tmp_path / "pyproject.toml", '[tool.gradfix]\npython = "envs/p/bin/python"\nroot = "libs"\n'
                                       'memory-limit = 512\ncpu-limit = 2.5\n')
    c = load_config(str(tmp_path))
    assert (c.python, c.import_roots, c.memory_limit_mb, c.cpu_limit_s) == (
        str(tmp_path / "envs/p/bin/python"), [str(tmp_path / "libs")], 512, 2.5)
    write(tmp_path / "pyproject.toml", "[tool.gradfix]\nmemory-limit = -1\n")
    r = CliRunner().invoke(main, ["check", "m.py"])
    assert r.exit_code == 2 and "memory-limit must be a positive number" in r.output
