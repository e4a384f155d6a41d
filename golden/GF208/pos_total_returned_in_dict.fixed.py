# GF208 positive: the epoch total leaves the function inside a dict, and the caller treats it as a tensor
# (`.cpu()`). `.item()` would hand back a float there, so the fix detaches instead.
import torch
from torch import nn


def fit_one_epoch(net, batches, loss_fn, opt):
    net.train()
    epoch_loss = 0
    for inputs, targets in batches:
        loss = loss_fn(net(inputs), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        epoch_loss += loss.detach()
    return {"loss": epoch_loss / len(batches)}


def fit(net, batches, loss_fn, opt, epochs):
    curve = []
    for _ in range(epochs):
        stats = fit_one_epoch(net, batches, loss_fn, opt)
        curve.append(stats["loss"].cpu().detach().numpy())
    return curve


if __name__ == "__main__":
    net = nn.Linear(6, 1)
    batches = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(4)]
    print(fit(net, batches, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.05), 3))
