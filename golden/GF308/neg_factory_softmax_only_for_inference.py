# GF308 negative: the factories nearby that are correct. One returns the logits
# model for training and wraps it with a softmax only for serving; one returns a
# classifier whose softmax runs only when `probs=True` is passed; one may return
# either a softmax head or a plain linear layer, so what it builds is not shown.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x, probs=False):
        out = self.fc(x)
        if probs:
            out = F.softmax(out, dim=-1)
        return out


def make_logits_model():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))


def make_server(model):
    return nn.Sequential(model, nn.Softmax(dim=-1))


def make_scorer():
    return Scorer()


def make_head(calibrated):
    if calibrated:
        return nn.Sequential(nn.Linear(6, 4), nn.Softmax(dim=-1))
    return nn.Linear(6, 4)


def train(batches, calibrated):
    model = make_logits_model()
    scorer = make_scorer()
    head = make_head(calibrated)
    params = list(model.parameters()) + list(scorer.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    for x, y in batches:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) + F.cross_entropy(scorer(x), y) + F.cross_entropy(head(x), y)
        loss.backward()
        opt.step()
    return make_server(model)


if __name__ == "__main__":
    train([(torch.randn(8, 6), torch.randint(0, 4, (8,)))], calibrated=False)
