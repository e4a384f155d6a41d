# GF104 positive: the step packs sequences elsewhere, but the auxiliary term reads
# `.data` of the model's padded output (a plain tensor, not a PackedSequence): that
# term is a constant to backward, so the length penalty trains nothing.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

rnn = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 3)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
crit = nn.CrossEntropyLoss()

for step in range(3):
    x = torch.randn(2, 5, 4)
    tags = torch.randint(0, 3, (2, 5))
    lengths = torch.tensor([5, 3])
    h, _ = rnn(x)
    logits = head(h)
    packed = pack_padded_sequence(logits, lengths, batch_first=True, enforce_sorted=False)
    packed_tags = pack_padded_sequence(tags, lengths, batch_first=True, enforce_sorted=False)
    loss = crit(packed.data, packed_tags.data) + 0.01 * logits.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
