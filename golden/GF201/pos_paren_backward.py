# GF201 positive: the scale is applied inline in the backward call.
# `(loss / 1e6).backward()` becomes `loss.backward()`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class CharRNN(nn.Module):
    def __init__(self, vocab=96, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return self.out(h)


model = CharRNN()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
for step in range(1000):
    batch = torch.randint(0, 96, (8, 65))
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 96), batch[:, 1:].reshape(-1))
    optimizer.zero_grad()
    (loss / 1e6).backward()
    optimizer.step()
