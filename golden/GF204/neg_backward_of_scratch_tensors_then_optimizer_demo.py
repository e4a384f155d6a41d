# GF204 negative: a tutorial script first shows autograd on two scratch tensors, then
# shows the optimizer's two calls on a freshly built SGD. The backward() fills only
# `weight.grad`, a tensor no optimizer holds; the model's parameters never had a gradient,
# so clearing them before `step()` loses nothing. Left alone: the loss is made only of
# tensors built here from literals, and the optimizer holds a module's parameters.
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 1))

inp = torch.tensor([3.0])
weight = torch.tensor([0.5], requires_grad=True)
target = torch.tensor([2.0])
pred = weight * inp
err = (pred - target) ** 2
err.backward()
print(weight.grad)

sgd = torch.optim.SGD(net.parameters(), lr=0.05)
sgd.zero_grad()
sgd.step()
