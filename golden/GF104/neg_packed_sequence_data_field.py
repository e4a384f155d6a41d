# GF104 negative: `.data` of a PackedSequence is the namedtuple field that holds the
# packed values, not `Tensor.data`. Packing the logits keeps their graph
# (PackPaddedSequenceBackward0), so the loss computed from the two fields trains the
# tagger; dropping `.data` would hand PackedSequence objects to the criterion and break.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(5, 12, batch_first=True)
        self.head = nn.Linear(12, 7)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.head(h)


tagger = Tagger()
opt = torch.optim.Adam(tagger.parameters(), lr=1e-3)
crit = nn.CrossEntropyLoss()


def packed_loss(logits, tags, lengths):
    flat_logits = pack_padded_sequence(logits, lengths, batch_first=True, enforce_sorted=False)
    flat_tags = pack_padded_sequence(tags, lengths, batch_first=True, enforce_sorted=False)
    return crit(flat_logits.data, flat_tags.data)


for step in range(3):
    x = torch.randn(2, 6, 5)
    tags = torch.randint(0, 7, (2, 6))
    lengths = torch.tensor([6, 4])
    logits = tagger(x)
    seq_logits = nn.utils.rnn.pack_padded_sequence(logits, lengths, batch_first=True, enforce_sorted=False)
    seq_tags = nn.utils.rnn.pack_padded_sequence(tags, lengths, batch_first=True, enforce_sorted=False)
    loss = crit(seq_logits.data, seq_tags.data) + packed_loss(logits, tags, lengths)
    opt.zero_grad()
    loss.backward()
    opt.step()
