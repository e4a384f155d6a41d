"""A network an agent's `__init__` builds in a tuple assignment (`self.q, self.target = QNet(...), QNet(...)`), the
agent's arguments taken from a call of it (held_builds._pairs): each element is the build of its own target. An
element that reads what the same statement sets, or a tuple whose sides do not pair up, is not taken for one."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

AGENT = """
import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self, n_in, n_out, scaled=False):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)
        if scaled:
            self.register_forward_hook(lambda mod, inp, out: out * 3)

    def forward(self, x):
        return self.fc(x)


class Agent:
    def __init__(self, n_in, n_out):
        self.n_in = n_in
        {build}

    def act(self, obs):
        return self.q.forward(obs).argmax()


agent = Agent(5, {n_out})
"""

BUILDS = {
    "pair": ("self.q, self.target = QNet(self.n_in, n_out), QNet(self.n_in, n_out)", 3, "equivalent"),
    "hooked": ("self.target, self.q = QNet(self.n_in, n_out), QNet(self.n_in, n_out, scaled=n_out > 2)", 3,
               "changes-behaviour"),
    "unpaired": ("self.q, self.target = [QNet(self.n_in, n_out)] * 2", 3, "untestable"),
}


def request(root, build: str, n_out: int, setup: str) -> VerifyRequest:
    src = textwrap.dedent(AGENT).replace("{build}", build).replace("{n_out}", str(n_out))
    (root / "agent.py").write_text(src, encoding="utf-8")
    call = "self.q.forward(obs)"
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "agent.py"), original=src, rewritten=src.replace(call, "self.q(obs)"),
                         rule="GF305", line=line,
                         contract={"kind": "forward-call", "receiver": "q", "in_class": False, "call_old": call,
                                   "call_new": "self.q(obs)", "setup": setup}, project_root=str(root))


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    reqs = []
    for name, (build, n_out, _v) in BUILDS.items():
        root = tmp_path_factory.mktemp(name)
        setup = {"pair": "q = QNet(self.n_in, n_out)", "hooked": "q = QNet(self.n_in, n_out, scaled=n_out > 2)",
                 "unpaired": "q = QNet(self.n_in, n_out)"}[name]
        reqs.append(request(root, build, n_out, setup))
    return dict(zip(BUILDS, shared_verifier.verify_many(reqs)))


@pytest.mark.parametrize("name", list(BUILDS))
def test_tuple_builds(verdicts, name):
    v = verdicts[name]
    assert v.verdict == BUILDS[name][2], v
    if v.verdict != "untestable":
        assert ("`q` built as Agent.__init__ builds it, with `self.n_in` as Agent.__init__ sets them, n_in, n_out from "
                "`Agent(5, 3)`") in v.detail, v
    else:
        assert "NameError" in v.detail or "self" in v.detail, v
