"""A network an agent's `__init__` builds and places on a device that `__init__` fills in when it is not given
(`if device is None: device = torch.device(...)`; `self.net = Net(size).to(device)`): the device is a rebound
parameter, but only the placement reads it, so the network is built without it (held_builds._unplaced) and the
check places it itself. A rebound name the build itself reads, or a network class that overrides the placement
methods, stays untestable."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

AGENT = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.fc = nn.Linear(size, 2)
{extra}
    def forward(self, x):
        return self.fc(x)


class Player:
    def __init__(self, size, device=None):
        if device is None:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{rebind}        self.net = {build}

    def act(self, obs):
        return self.net.forward(obs).argmax()


player = Player(5)
"""

OVERRIDE = "    def to(self, *args, **kwargs):\n        print('moved')\n        return super().to(*args, **kwargs)\n"
CASES = {
    "placed": ("Net(size).to(device)", "", "", "equivalent"),
    "placed_twice": ("Net(size).cpu().to(device)", "", "", "equivalent"),
    "rebound_size": ("Net(size).to(device)", "        size = size + 1\n", "", "untestable"),
    "overridden": ("Net(size).to(device)", "", OVERRIDE, "untestable"),
}


def request(root, build: str, rebind: str, extra: str) -> VerifyRequest:
    src = textwrap.dedent(AGENT).replace("{build}", build).replace("{rebind}", rebind).replace("{extra}", extra)
    (root / "agent.py").write_text(src, encoding="utf-8")
    call = "self.net.forward(obs)"
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "agent.py"), original=src, rewritten=src.replace(call, "self.net(obs)"),
                         rule="GF305", line=line,
                         contract={"kind": "forward-call", "receiver": "net", "in_class": False, "call_old": call,
                                   "call_new": "self.net(obs)", "setup": f"net = {build}"}, project_root=str(root))


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    reqs = [request(tmp_path_factory.mktemp(name), build, rebind, extra)
            for name, (build, rebind, extra, _v) in CASES.items()]
    return dict(zip(CASES, shared_verifier.verify_many(reqs)))


@pytest.mark.parametrize("name", list(CASES))
def test_placement_left_to_the_check(verdicts, name):
    v = verdicts[name]
    assert v.verdict == CASES[name][3], v
    if v.verdict == "equivalent":
        assert f"without the placement of `{CASES[name][0]}`" in v.detail and "`Player(5)`" in v.detail, v
    elif name == "rebound_size":
        assert "rebinds size" in v.detail, v
    else:
        assert "overrides the placement methods" in v.detail, v
