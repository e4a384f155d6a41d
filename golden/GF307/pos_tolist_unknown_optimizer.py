# GF307 positive in a step function whose optimizer comes from the caller: the
# model called in the step is taken as the trained one. `.tolist()` cuts it off.
import torch


def train_step(model, optimizer, loss_fn, x, y):
    optimizer.zero_grad()
    scores = model(x).tolist()
    loss = loss_fn(torch.tensor(scores, requires_grad=True), y)
    loss.backward()
    optimizer.step()
    return loss.item()
