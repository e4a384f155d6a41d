import torch
import torch.nn as nn


def make_classifier(widths, n_out):
    blocks = []
    for a, b in zip(widths, widths[1:]):
        blocks += [nn.Linear(a, b), nn.GELU()]
    blocks.append(nn.Linear(widths[-1], n_out))
    blocks.append(nn.Softmax(dim=-1))
    return nn.Sequential(*blocks)


def train(net, data):
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(net.parameters())
    for xb, yb in data:
        opt.zero_grad()
        crit(net(xb), yb).backward()
        opt.step()


train(make_classifier([5, 12], 4), [(torch.randn(2, 5), torch.tensor([0, 3]))])
