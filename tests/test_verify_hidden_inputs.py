"""`forward(self, input, hidden)` of a model holding one recurrent layer (a decoder step, inputs._hidden_candidates):
the second argument is the layer's initial state, (num_layers * directions, batch, hidden_size), or an (h, c) pair
for an LSTM that takes one; two inputs shaped like the first one fail there."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from gradfix.verify.inputs import _hidden_candidates, infer_input  # noqa: E402
from gradfix.verify.runtime import Untestable  # noqa: E402


class Step(nn.Module):
    def __init__(self, kind: str, layers: int = 1, pair: bool = False):
        super().__init__()
        self.kind, self.pair = kind, pair
        self.embedding = nn.Embedding(10, 4)
        self.rnn = getattr(nn, kind)(4, 6, num_layers=layers, batch_first=True)
        self.out = nn.Linear(6, 10)

    def forward(self, input, hidden):
        e = self.embedding(input)
        if self.kind == "LSTM" and not self.pair:
            hidden = (hidden, torch.zeros_like(hidden))  # makes the cell state itself
        o, h = self.rnn(e, hidden)
        return self.out(o)[:, 0, :], h


@pytest.mark.parametrize("kind, layers, pair", [("RNN", 1, False), ("GRU", 2, False), ("LSTM", 1, False),
                                                ("LSTM", 2, True)])
def test_the_second_argument_is_the_initial_state(kind, layers, pair):
    notes: dict = {}
    ids, hidden = infer_input("step", [Step(kind, layers, pair).double()], torch.float64, notes=notes)
    assert tuple(ids.shape) == (4, 16) and ids.dtype == torch.long
    h = hidden[0] if pair else hidden
    assert tuple(h.shape) == (layers, 4, 6) and isinstance(hidden, tuple) == pair
    assert f"initial state of its {kind}" in notes["input"]


def test_two_recurrent_layers_give_no_state():
    class Two(Step):
        def __init__(self):
            super().__init__("RNN")
            self.rnn2 = nn.RNN(6, 6, batch_first=True)

    m = Two().double()
    assert _hidden_candidates(m, [lambda: (torch.zeros(4, 16, dtype=torch.long),)], torch.float64) == []
    with pytest.raises(Untestable, match="input shape unknown"):
        infer_input("two", [m], torch.float64)
