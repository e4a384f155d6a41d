"""`gradfix apply -i` driven through a real pseudo-terminal (pexpect)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

EXE = str(Path(sys.executable).with_name("gradfix"))

TWO = """import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc(x)
        h /= h.norm(dim=1, keepdim=True)
        g = torch.sigmoid(h)
        g *= 2
        return g
"""
FIXED_FIRST = "        h = h / h.norm(dim=1, keepdim=True)\n"
FIXED_SECOND = "        g = g * 2\n"
PROMPT = r"Apply this change \[y,n,a,d,q,\?\]\? "


def spawn(cwd, *args):
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    return pexpect.spawn(EXE, ["apply", "-i", "--no-verify", *args], cwd=str(cwd), env=env, encoding="utf-8",
                         timeout=180)  # a hang guard, not a timing: at load 25-30 on 2 cores a start takes > 30 s


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "a.py").write_text(TWO)
    (tmp_path / "b.py").write_text(TWO)
    return tmp_path


def answer(child, *keys):
    for k in keys:
        child.expect(PROMPT)
        child.sendline(k)


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.before, child.exitstatus


def test_y_then_q_in_same_file_writes_the_accepted_change(proj):
    child = spawn(proj, "a.py", "b.py")
    child.expect("a.py:12:9: GF101")
    answer(child, "y")
    child.expect("a.py:14:9: GF101")
    answer(child, "q")
    out, code = finish(child)
    a = (proj / "a.py").read_text()
    assert FIXED_FIRST in a and "        g *= 2\n" in a
    assert (proj / "b.py").read_text() == TWO
    assert "a.py: 1 applied, 0 skipped, 0 refused by verification, 1 not reviewed (written)" in out


def test_n_a_and_d(proj):
    child = spawn(proj, "a.py", "b.py")
    answer(child, "n", "y")      # a.py: skip first, take second
    answer(child, "d")           # b.py: skip the rest of the file
    out, code = finish(child)
    a = (proj / "a.py").read_text()
    assert FIXED_FIRST not in a and FIXED_SECOND in a
    assert (proj / "b.py").read_text() == TWO
    child = spawn(proj, "b.py")
    answer(child, "a")
    out, code = finish(child)
    b = (proj / "b.py").read_text()
    assert FIXED_FIRST in b and FIXED_SECOND in b
    assert code == 0


def test_help_and_invalid_answers_ask_again(proj):
    child = spawn(proj, "a.py")
    child.expect(PROMPT)
    child.sendline("?")
    child.expect("q - quit; changes already accepted are written")
    child.expect(PROMPT)
    child.sendline("maybe")
    child.expect(PROMPT)
    child.sendline("y")
    answer(child, "n")
    out, code = finish(child)
    assert FIXED_FIRST in (proj / "a.py").read_text()
    assert code == 1  # a finding remains


def test_each_change_shows_hunk_and_verdict(proj):
    child = spawn(proj, "a.py")
    child.expect(r"-        h /= h.norm\(dim=1, keepdim=True\)")
    child.expect(r"\+        h = h / h.norm\(dim=1, keepdim=True\)")
    child.expect("verification: not-verified")
    answer(child, "q")
    finish(child)


def test_ctrl_c_writes_nothing_more_and_prints_summary(proj):
    child = spawn(proj, "a.py", "b.py")
    answer(child, "a")            # a.py fully accepted and written
    child.expect("b.py:12:9")
    child.expect(PROMPT)
    child.sendline("y")
    child.expect(PROMPT)
    child.sendintr()
    out, code = finish(child)
    assert FIXED_FIRST in (proj / "a.py").read_text()
    assert (proj / "b.py").read_text() == TWO
    assert "Summary" in out and "a.py: 2 applied" in out
    assert "interrupted: the file under review (b.py) was not written" in out
    assert code == 130


def test_refuses_without_terminal(proj):
    r = subprocess.run([EXE, "apply", "-i", "a.py"], cwd=proj, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert r.returncode == 2
    assert "--diff" in r.stderr
    assert (proj / "a.py").read_text() == TWO
