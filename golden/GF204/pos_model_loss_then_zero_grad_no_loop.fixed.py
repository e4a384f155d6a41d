# GF204 positive: the same shape as a tutorial's one-shot demo, but here the loss comes
# from the model the optimizer holds, so clearing the gradients between backward() and
# step() leaves the update with nothing: the parameters do not move.
import torch
import torch.nn as nn

net = nn.Linear(6, 2)
sgd = torch.optim.SGD(net.parameters(), lr=0.05)
inp = torch.randn(5, 6)
target = torch.randn(5, 2)
sgd.zero_grad()
err = ((net(inp) - target) ** 2).mean()
err.backward()
sgd.step()
