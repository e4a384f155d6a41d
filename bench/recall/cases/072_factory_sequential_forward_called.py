"""Source: https://github.com/vinhkhuc/PyTorch-Mini-Tutorials/blob/master/3_neural_net.py
Title: (held-out survey, bench/HELDOUT3.md recall) mini tutorial, a two-layer network
What went wrong: the network is an nn.Sequential built and returned by a helper function,
and both the training step and the prediction call `model.forward(x)`, which skips the
module's hooks.
runs: trains and predicts (latent: no hooks are registered here)
scope: extension (the module is made by a function of the file)
"""
import torch
from torch import optim


def build_model(n_in, n_hidden, n_out):
    model = torch.nn.Sequential()
    model.add_module("fc1", torch.nn.Linear(n_in, n_hidden, bias=False))
    model.add_module("act", torch.nn.Sigmoid())
    model.add_module("fc2", torch.nn.Linear(n_hidden, n_out, bias=False))
    return model


def train(model, loss, optimizer, x, y):
    optimizer.zero_grad()
    fx = model.forward(x)  # expect: GF305
    output = loss(fx, y)
    output.backward()
    optimizer.step()
    return output.item()


def predict(model, x):
    with torch.no_grad():
        return model.forward(x).argmax(dim=1)  # expect: GF305


def main():
    x, y = torch.randn(64, 20), torch.randint(0, 4, (64,))
    model = build_model(20, 32, 4)
    loss = torch.nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(3):
        for k in range(0, 64, 16):
            train(model, loss, optimizer, x[k:k + 16], y[k:k + 16])
        print(epoch, (predict(model, x) == y).float().mean().item())


if __name__ == "__main__":
    main()
