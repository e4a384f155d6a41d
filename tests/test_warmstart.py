"""A warm `check` loads no rule and no libcst (gradfix/warmstart.py), and reports what a cold
one does; a change of the configuration is validated again."""

from __future__ import annotations

import os
import subprocess
import sys

from gradfix.engine import Engine
from samples import MODEL, TRAIN, run

PROBE = ("import sys\nfrom gradfix.cli.main import main\n"
         "try:\n    main(['check', '.'])\nexcept SystemExit as e:\n    code = e.code\n"
         "print('LOADED', sorted(m for m in ('libcst', 'gradfix.codemods', 'gradfix.engine') if m in sys.modules), code)\n")


def _check(folder):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GRADFIX_NO_CACHE", "GRADFIX_CACHE_DIR")}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=folder, capture_output=True, text=True, env=env)
    *report, loaded = out.stdout.strip().splitlines()
    return "\n".join(report), loaded


def test_a_warm_check_loads_no_rule_and_reports_the_same(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gradfix]\nignore = ['GF2']\n")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    cold, loaded_cold = _check(tmp_path)
    assert "GF305" in cold and "libcst" in loaded_cold and loaded_cold.endswith(" 1")
    warm, loaded_warm = _check(tmp_path)
    assert warm == cold
    assert loaded_warm == "LOADED [] 1"
    # a file that changed is analysed: the rules load then, and the result is a cold run's
    (tmp_path / "train.py").write_text(TRAIN.replace("net.forward(x)", "net(x)"))
    after, loaded = _check(tmp_path)
    assert "libcst" in loaded and "GF305" not in after and loaded.endswith(" 0")
    assert after == run(["check", "--no-cache", "."], tmp_path).output.rstrip("\n")


def test_a_changed_configuration_is_validated_again(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gradfix.rules.GF201]\n")
    (tmp_path / "model.py").write_text(MODEL)
    assert run(["check", "."], tmp_path).exit_code == 0
    assert run(["check", "."], tmp_path).exit_code == 0          # warm
    (tmp_path / "pyproject.toml").write_text("[tool.gradfix.rules.GF201]\nno_such_option = 1\n")
    bad = run(["check", "."], tmp_path)
    assert bad.exit_code == 2 and "no_such_option" in bad.output
    bad = run(["check", ".", "--select", "GF999"], tmp_path)
    assert bad.exit_code == 2


def test_the_remembered_fingerprint_is_the_engines(tmp_path, monkeypatch):
    from gradfix import warmstart
    from gradfix.cli.main import _build

    (tmp_path / "pyproject.toml").write_text("[tool.gradfix]\nselect = ['GF1', 'GF3']\n"
                                             "[tool.gradfix.per-file-ignores]\n'tests/*' = ['GF101']\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADFIX_CACHE_DIR", raising=False)
    cold, _ = _build((".",), ("GF101,GF305",), ("GF305",), warm=True)
    warm, config = _build((".",), ("GF101,GF305",), ("GF305",), warm=True)
    assert isinstance(cold, Engine) and isinstance(warm, warmstart.WarmEngine)
    assert warm.fingerprint == cold.fingerprint == warm.materialise().fingerprint
    other, _ = _build((".",), ("GF3",), (), warm=True)            # other options: an engine of its own
    assert isinstance(other, Engine) and other.fingerprint != cold.fingerprint


def test_a_warm_check_hashes_each_text_once_and_looks_for_pyproject_once(tmp_path, monkeypatch):
    """Counted in-process: the project index's content hash of a file is the one its results key
    is made from, and the cache's root, the engine's key and the configuration share one lookup."""
    import hashlib

    from gradfix import cache, config, warmstart
    from gradfix.cli import main as cli_main

    (tmp_path / "pyproject.toml").write_text("[tool.gradfix]\n")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.delenv("GRADFIX_CACHE_DIR", raising=False)
    monkeypatch.delenv("GRADFIX_NO_CACHE", raising=False)
    cold = run(["check", "."], tmp_path)
    texts = {MODEL.encode(), TRAIN.encode()}
    hashed: list[bytes] = []
    lookups: list[str] = []

    real_sha256 = hashlib.sha256

    class Counting:
        def __init__(self):
            self.h = real_sha256()

        def update(self, data):
            if data in texts:
                hashed.append(data)
            self.h.update(data)

        def hexdigest(self):
            return self.h.hexdigest()

        def digest(self):
            return self.h.digest()

    real_find = config.find_pyproject

    def find(start):
        lookups.append(start)
        return real_find(start)

    monkeypatch.setattr(cache.hashlib, "sha256", Counting)
    for module in (config, warmstart, cli_main):
        monkeypatch.setattr(module, "find_pyproject", find)
    warm = run(["check", "."], tmp_path)
    assert warm.output == cold.output and "GF305" in warm.output
    assert sorted(hashed) == sorted(texts)          # each text once
    assert len(lookups) == 1
