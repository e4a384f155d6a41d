"""Source: https://github.com/pytorch/pytorch/issues/5282
Title: Possible bug in KL divergence
What went wrong: the reporter fed KLDivLoss the probabilities a softmax head produces, expecting it
to take their log itself, and got wrong results; the maintainer answered that the input must already
be log-probabilities.
runs: trains; the reported divergence is not one (it can be negative) and its gradient does not fit
the target distribution
scope: documented (a model whose forward, an nn.Sequential, ends in nn.Softmax)
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4), nn.Softmax(dim=1))
criterion = nn.KLDivLoss(reduction="batchmean")
opt = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(5):
    x = torch.randn(10, 6)
    target = torch.softmax(torch.randn(10, 4), dim=1)
    loss = criterion(model(x), target)  # expect: GF309
    opt.zero_grad()
    loss.backward()
    opt.step()
