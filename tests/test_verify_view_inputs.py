"""An input shaped as forward's first reshape of its argument reads it (inputs._view_candidates): an agent's
convolutional Q-network that takes flat screen frames and calls `frame.view(-1, 1, 60, 44)` fails on every square
image of the first layer's candidates, and runs on (4, 1, 60, 44). Only int literals count (one -1, first, as the
batch); a size read from an attribute or a second -1 adds nothing."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from gradfix.verify import VerifyRequest  # noqa: E402
from gradfix.verify.inputs import _view_candidates, infer_input  # noqa: E402
from gradfix.verify.runtime import Untestable  # noqa: E402

SCREEN_NET = """
import torch
import torch.nn as nn


class ScreenNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 6, stride=3)
        self.head = nn.Linear(4 * 19 * 13, 5)
        self.h, self.w = 60, 44

    def forward(self, frame):
        frame = torch.as_tensor(frame)
        frame = frame.view({view})
        x = torch.relu(self.conv(frame))
        return self.head(x.flatten(1))


class Player:
    def __init__(self):
        self.net = ScreenNet()

    def act(self, frame):
        return self.net.forward(frame).argmax()
"""


def load(tmp_path, view: str):
    src = textwrap.dedent(SCREEN_NET).format(view=view)
    path = tmp_path / f"screen_{abs(hash(view))}.py"
    path.write_text(src, encoding="utf-8")
    ns: dict = {}
    exec(compile(src, str(path), "exec"), ns)  # getsource reads the file back, as for a loaded project file
    return ns["ScreenNet"]().double(), src, path


def test_a_literal_view_gives_the_input(tmp_path):
    net, _src, _path = load(tmp_path, "-1, 1, 60, 44")
    notes: dict = {}
    (x,) = infer_input("net", [net], torch.float64, notes=notes)
    assert tuple(x.shape) == (4, 1, 60, 44)
    assert notes["input"] == "shaped (4, 1, 60, 44) as forward's `frame.view(-1, 1, 60, 44)` reads it"


@pytest.mark.parametrize("view", ["-1, 1, self.h, self.w", "-1, -1, 60, 44", "1, -1, 60, 44", "(-1, 0, 60, 44)"])
def test_sizes_that_are_not_literals_give_nothing(tmp_path, view):
    net, _src, _path = load(tmp_path, view)
    assert _view_candidates(net, torch.float64) == []
    with pytest.raises(Untestable, match="input shape unknown for net"):
        infer_input("net", [net], torch.float64)


def test_a_tuple_of_sizes_counts(tmp_path):
    net, _src, _path = load(tmp_path, "(-1, 1, 60, 44)")
    (make,) = _view_candidates(net, torch.float64)
    assert make.shape == (4, 1, 60, 44)


def test_the_forward_call_check_on_that_input(tmp_path, shared_verifier):
    _net, src, path = load(tmp_path, "-1, 1, 60, 44")
    call = "self.net.forward(frame)"
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    req = VerifyRequest(path=str(path), original=src, rewritten=src.replace(call, "self.net(frame)"), rule="GF305",
                        line=line, contract={"kind": "forward-call", "receiver": "net", "in_class": False,
                                             "call_old": call, "call_new": "self.net(frame)",
                                             "setup": "net = ScreenNet()"}, project_root=str(tmp_path))
    (out,) = shared_verifier.verify_many([req])
    assert out.verdict == "equivalent", out
    assert "input shaped (4, 1, 60, 44) as forward's `frame.view(-1, 1, 60, 44)` reads it" in out.detail, out


# --------------------------------------------------------------------------- an argument with a layer of its own


class Critic(nn.Module):
    """A state-action value: the state through `fc_s`, the action through `fc_a` of its own width, then summed."""

    def __init__(self, n_obs=6, n_act=2):
        super().__init__()
        self.fc_s = nn.Linear(n_obs, 32)
        self.fc_h = nn.Linear(32, 16)
        self.fc_a = nn.Linear(n_act, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, state, action):
        return self.out(torch.relu(self.fc_h(torch.relu(self.fc_s(state))) + self.fc_a(action)))


def test_an_argument_that_feeds_a_layer_of_its_own():
    from gradfix.verify.inputs import _side_widths

    critic = Critic().double()
    assert _side_widths(critic) == [2]
    s, a = infer_input("critic", [critic], torch.float64)
    assert tuple(s.shape) == (4, 6) and tuple(a.shape) == (4, 2)


def test_a_chain_has_no_side_width():
    from gradfix.verify.inputs import _side_widths

    chain = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 16), nn.Linear(16, 1))
    assert _side_widths(chain) == []
