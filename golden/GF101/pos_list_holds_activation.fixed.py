# GF101 positive next to the torch-function case: a real container (the list `history`)
# keeps the activation, and the in-place scale changes what it holds too.
import torch


def run(batch):
    weight = torch.randn(4, 4, requires_grad=True)
    history = []
    hidden = torch.add(torch.matmul(batch, weight), 1.0)
    history.append(hidden)
    hidden = hidden.mul(0.5)
    loss = hidden.sum() + history[0].mean()
    loss.backward()
    return history
