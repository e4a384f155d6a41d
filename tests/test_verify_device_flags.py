"""A module-level device built from the file's own flags (source._is_device_value with a computed-constant test):
`use_cuda = torch.cuda.is_available()` then `device = torch.device("cuda" if use_cuda else "cpu")`, a GPU index in
an f-string, an mps chain. Such a statement runs at load (nothing but `torch.device` and the `is_available()`
probes is called), so a model that reads `device` gets a verdict; a device from the command line does not run."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify import source as S

pytest.importorskip("torch")

MODEL = """
import argparse
import torch
import torch.nn as nn
{flags}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = self.fc(x).to(device).sigmoid()
        y *= 2.0
        return y

import torch
"""

FLAGS = {
    "flag": "use_cuda = torch.cuda.is_available()\ndevice = torch.device('cuda' if use_cuda else 'cpu')",
    "index": "GPU = 0\ndevice = torch.device(f'cuda:{GPU}' if torch.cuda.is_available() else 'cpu')",
    "mps": "device = 'cuda' if torch.cuda.is_available() else 'mps' if torch.backends.mps.is_available() else 'cpu'",
    "argv": "args = argparse.ArgumentParser().parse_args()\ndevice = torch.device('cuda' if args.cuda else 'cpu')",
}


def request(root: Path, name: str, new: str) -> VerifyRequest:
    path = root / f"{name}.py"
    src = path.read_text(encoding="utf-8")
    line = 1 + src.splitlines().index("        y *= 2.0")
    return VerifyRequest(path=str(path), original=src, rewritten=src.replace("y *= 2.0", new), rule="GF101",
                         line=line, contract={"kind": "equal"}, project_root=None)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("devices")
    for name, flags in FLAGS.items():
        (root / f"{name}.py").write_text(MODEL.format(flags=flags), encoding="utf-8")
    reqs = [request(root, name, "y = y * 2.0") for name in FLAGS] + [request(root, "flag", "y = y * 2.5")]
    return dict(zip(list(FLAGS) + ["wrong"], shared_verifier.verify_many(reqs)))


@pytest.mark.parametrize("name", ["flag", "index", "mps"])
def test_device_from_the_files_flags_runs_at_load(verdicts, name):
    v = verdicts[name]
    assert v.verdict == "fixes-crash", v  # sigmoid saves its output: `*=` breaks its backward


def test_the_rewrite_is_still_compared(verdicts):
    assert verdicts["wrong"].verdict == "failed", verdicts["wrong"]


def test_a_device_from_the_command_line_does_not_run(verdicts):
    v = verdicts["argv"]
    assert v.verdict == "untestable", v
    assert "uses the module-level name 'device'" in v.detail, v


def classified(src: str) -> tuple[list[str], list[str]]:
    kept, computed, dropped = S.classify_module(ast.parse(textwrap.dedent(src)))
    return [ast.unparse(s) for s in kept + computed], [ast.unparse(s) for s in dropped]


def test_only_a_plain_torch_and_pure_parts_make_a_device():
    run, skipped = classified("""
        import torch
        use_cuda = torch.cuda.is_available()
        device = torch.device('cuda' if use_cuda and not False else 'cpu')
        other = torch.device('cuda' if load_flag() else 'cpu')
    """)
    assert "device = torch.device('cuda' if use_cuda and (not False) else 'cpu')" in run
    assert skipped == ["other = torch.device('cuda' if load_flag() else 'cpu')"]
    # `torch` bound by something other than `import torch`: its `device` is not torch's
    run, skipped = classified("""
        import torch
        import mylib as torch
        use_cuda = True
        device = torch.device('cuda' if use_cuda else 'cpu')
    """)
    assert skipped == ["device = torch.device('cuda' if use_cuda else 'cpu')"]
