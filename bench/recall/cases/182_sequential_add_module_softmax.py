"""Source: https://github.com/vinhkhuc/PyTorch-Mini-Tutorials/issues/1
Title: About CrossEntroyLoss
What went wrong: the tutorial builds its model as a `Sequential` with `add_module(...)` calls and
adds a final `Softmax` module, then trains it with `CrossEntropyLoss`, which already contains the
log-softmax; the maintainer removed the softmax layer.
runs: trains; the loss receives probabilities instead of logits
scope: extension
"""
import torch
import torch.nn as nn


def build_model(input_dim, output_dim):
    model = torch.nn.Sequential()
    model.add_module("linear_1", torch.nn.Linear(input_dim, 32, bias=False))
    model.add_module("relu_1", torch.nn.ReLU())
    model.add_module("linear_2", torch.nn.Linear(32, output_dim, bias=False))
    model.add_module("softmax", torch.nn.Softmax(dim=1))
    return model


model = build_model(12, 4)
loss_fn = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
for _ in range(3):
    optimizer.zero_grad()
    fx = model.forward(x)
    output = loss_fn(fx, y)  # expect: GF308
    output.backward()
    optimizer.step()
