# GF305 positive (latent: no hook is registered yet): the training helpers receive a
# plain holder object and call `holder.net.forward(x)`. Every call of the helpers in
# the file passes an object whose `net` the caller set to a module before the call,
# so the receiver is an nn.Module and `holder.net(x)` would run its hooks.
import torch
import torch.nn as nn


class Holder:
    def __init__(self, name):
        self.name = name
        self.net = None


def one_epoch(holder, batches, opt):
    holder.net.train()
    for x, y in batches:
        opt.zero_grad()
        out = holder.net(x)
        nn.functional.mse_loss(out, y).backward()
        opt.step()


def fit(holder, batches, epochs=3):
    opt = torch.optim.SGD(holder.net.parameters(), lr=0.1)
    for _ in range(epochs):
        one_epoch(holder, batches, opt)


def main():
    holder = Holder("regressor")
    holder.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    fit(holder, [(torch.randn(4, 5), torch.randn(4, 1))])


if __name__ == "__main__":
    main()
