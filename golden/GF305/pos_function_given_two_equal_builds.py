# GF305 positive: `predict` is called with two models, `net` and a clone made
# the same way (`net_clone = Scorer()`, then weights loaded into it); both are
# the same build, so the verifier builds `net = Scorer()` and compares
# `net.forward(x)` with `net(x)`.
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, width=5):
        super().__init__()
        self.lin = nn.Linear(width, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)


def predict(net, batches):
    net.eval()
    with torch.no_grad():
        return torch.cat([net.forward(x) for x in batches])


net = Scorer()
scores = predict(net, [torch.randn(4, 5)])

net_clone = Scorer()
net_clone.load_state_dict(net.state_dict())
scores_again = predict(net_clone, [torch.randn(4, 5)])
