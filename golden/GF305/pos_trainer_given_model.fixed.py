# GF305 positive: a plain runner object keeps the network it is constructed with,
# and every construction in the file passes a module; `self.net.forward(x)`
# bypasses the module's hooks. The verifier builds `self.net` as the caller does.
import torch
import torch.nn as nn


class Runner:
    def __init__(self, net, lr=0.1):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=lr)

    def step(self, x, y):
        pred = self.net(x)
        loss = nn.functional.mse_loss(pred, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


regressor = nn.Linear(3, 1)
runner = Runner(regressor)
runner.step(torch.randn(8, 3), torch.randn(8, 1))
