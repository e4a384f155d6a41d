# GF305 positive: the network comes from a factory function of this file. Every path of
# `make_regressor` returns a module (an nn.Sequential filled with add_module, or a
# Linear for the tiny case), so `net` is a module and `net.forward(x)` skips its hooks.
import torch
import torch.nn as nn


def make_regressor(n_in, hidden=0):
    if hidden == 0:
        return nn.Linear(n_in, 1)
    net = nn.Sequential()
    net.add_module("hidden", nn.Linear(n_in, hidden))
    net.add_module("act", nn.Tanh())
    net.add_module("out", nn.Linear(hidden, 1))
    return net


def fit(xs, ys, epochs=3):
    net = make_regressor(xs.shape[1], hidden=8)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for _ in range(epochs):
        opt.zero_grad()
        pred = net.forward(xs).squeeze(1)
        loss = ((pred - ys) ** 2).mean()
        loss.backward()
        opt.step()
    return net


if __name__ == "__main__":
    fit(torch.randn(16, 4), torch.randn(16))
