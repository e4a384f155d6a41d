"""Healthy: an LSTM sequence classifier over embedded tokens, Adam, gradient clipping before the step."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, vocab=50, dim=16, hidden=32, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, classes)

    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        return self.out(h[:, -1])


model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(8):
    tokens = torch.randint(1, 50, (8, 12))
    labels = torch.randint(0, 3, (8,))
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens), labels)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
