import torch
import torch.nn as nn


def make_classifier(widths, n_out, probs=False):
    blocks = []
    for a, b in zip(widths, widths[1:]):
        blocks += [nn.Linear(a, b), nn.GELU()]
    blocks.append(nn.Linear(widths[-1], n_out))
    return nn.Sequential(*blocks)


def make_scorer(widths):
    # the softmax comes before the last layer: the model returns logits
    return nn.Sequential(nn.Linear(widths[0], widths[1]), nn.Softmax(dim=-1), nn.Linear(widths[1], 3))


def train(net, data):
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(net.parameters())
    for xb, yb in data:
        opt.zero_grad()
        crit(net(xb), yb).backward()
        opt.step()


data = [(torch.randn(2, 5), torch.tensor([0, 2]))]
train(make_classifier([5, 12], 4), data)
train(make_scorer([5, 12]), data)
