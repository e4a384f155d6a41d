# GF308 negative: factories built with `add_module` whose output is not shown to
# be a softmax: the softmax is added first and a linear layer after it, the
# second factory adds its softmax only under a flag, and the third replaces the
# last layer after adding it. Their outputs go to cross_entropy as logits.
import torch
import torch.nn as nn
import torch.nn.functional as F


def softmax_then_linear(n_in, n_out):
    net = nn.Sequential()
    net.add_module("mix", nn.Softmax(dim=-1))
    net.add_module("out", nn.Linear(n_in, n_out))
    return net


def optional_probs(n_in, n_out, probs=False):
    net = nn.Sequential()
    net.add_module("out", nn.Linear(n_in, n_out))
    if probs:
        net.add_module("probs", nn.Softmax(dim=-1))
    return net


def replaced_head(n_in, n_out):
    net = nn.Sequential()
    net.add_module("out", nn.Linear(n_in, n_out))
    net.add_module("probs", nn.Softmax(dim=-1))
    net.probs = nn.Identity()
    return net


x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
for build in (softmax_then_linear, optional_probs, replaced_head):
    model = build(5, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    loss = F.cross_entropy(model.forward(x), y)
    loss.backward()
    opt.step()
