"""Source: https://github.com/ariecattan/SciCo/issues/2
Title: Double-softmax in validation loss
What went wrong: the validation step turns the logits into probabilities with softmax and
passes those to cross_entropy, which applies softmax again; the validation loss gets stuck
around 1.0 (the softmax bounds the minimum loss per example). The training loss was right.
runs: trains; the reported validation loss cannot go below about 0.74 per example
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PairClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.mlp(x)

    def training_step(self, x, y):
        return F.cross_entropy(self(x), y)

    def validation_step(self, x, y):
        logits = self(x)
        probs = torch.softmax(logits, dim=-1)
        loss = F.cross_entropy(probs, y)  # expect: GF308
        return loss, probs.argmax(dim=-1)


if __name__ == "__main__":
    model = PairClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 20), torch.randint(0, 4, (8,))
    opt.zero_grad()
    model.training_step(x, y).backward()
    opt.step()
    with torch.no_grad():
        print(model.validation_step(x, y)[0])
