# GF104 negative: the forward returns `.data` only on an export path, and the
# training step never takes that path's value alone: the loss keeps its gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, export=False):
        super().__init__()
        self.head = nn.Linear(10, 3)
        self.export = export

    def forward(self, x):
        probs = torch.sigmoid(self.head(x))
        if self.export:
            probs = probs.data
        return probs


model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(4):
    x, y = torch.randn(5, 10), torch.rand(5, 3).round()
    loss = F.binary_cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
