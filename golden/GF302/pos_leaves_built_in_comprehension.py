# GF302 positive: per-head gains built in a list comprehension, each created with
# requires_grad=True and then moved; the optimizer is handed the list of copies.
import torch

dev = torch.device("cuda")
gains = [torch.full((3,), 0.5, requires_grad=True).to(dev) for _ in range(4)]
opt = torch.optim.SGD(gains, lr=0.05)
