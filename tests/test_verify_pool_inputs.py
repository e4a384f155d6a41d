"""An embedding's sequence length from a 1-d pool applied after it (inputs._pool_lengths): a sentence classifier
that pools the whole sentence with `nn.AvgPool1d(sentence_length)` and squeezes the length away runs only on ids of
that length; the default length 16 reaches its head with a leftover length dimension."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from gradfix.verify.inputs import _pool_lengths, infer_input  # noqa: E402
from gradfix.verify.runtime import Untestable  # noqa: E402


class SentenceNet(nn.Module):
    def __init__(self, length: int, pool=nn.AvgPool1d):
        super().__init__()
        self.embedding = nn.Embedding(27, 8)
        self.pool = pool(length)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        x = self.embedding(x)                       # (batch, length, 8)
        x = self.pool(x.transpose(1, 2)).squeeze()  # (batch, 8) only when the pool covers the whole length
        return torch.sigmoid(self.head(x))


class PoolFirst(nn.Module):
    """A pool registered before the embedding says nothing about the embedding's input."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(6)
        self.embedding = nn.Embedding(27, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        x = self.pool(self.embedding(x).transpose(1, 2)).squeeze()
        return self.head(x)


@pytest.mark.parametrize("pool", [nn.AvgPool1d, nn.MaxPool1d])
def test_the_pool_kernel_gives_the_sequence_length(pool):
    net = SentenceNet(6, pool)
    notes: dict = {}
    (ids,) = infer_input("net", [net], torch.float64, notes=notes)
    assert tuple(ids.shape) == (4, 6) and ids.dtype == torch.long and int(ids.max()) < 27
    assert "kernel size" in notes["input"] and f"{pool.__name__}(6)" in notes["input"]


def test_the_default_length_still_comes_first():
    net = SentenceNet(16)
    notes: dict = {}
    (ids,) = infer_input("net", [net], torch.float64, notes=notes)
    assert tuple(ids.shape) == (4, 16) and "input" not in notes


def test_only_pools_after_the_embedding_count():
    net = PoolFirst()
    assert _pool_lengths(net, net.embedding) == []
    with pytest.raises(Untestable, match="input shape unknown"):
        infer_input("net", [net], torch.float64)
