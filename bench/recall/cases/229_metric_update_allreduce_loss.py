"""Source: https://github.com/horovod/horovod/pull/641
Title: Fix memory leak in pytorch_imagenet_resnet50.py example
What went wrong: the ImageNet example keeps running averages with a small `Metric` class whose
`update(val)` adds the all-reduced value of the loss tensor to `self.sum`; the training loop passes
the backpropagated loss, so the sum holds the graph of every batch and memory grows until OOM
(the fix reduces `val.detach()`).
runs: trains; `train_loss.sum` carries a grad_fn over all batches (the run prints it); the all-reduce is a single-process stand-in
scope: extension
"""
import torch
import torch.nn as nn


def allreduce(tensor, world_size=1):
    return tensor.clone() / world_size


class Metric:
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.0)
        self.n = torch.tensor(0.0)

    def update(self, val):
        self.sum += allreduce(val)
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.0125, momentum=0.9)
train_loss = Metric("train_loss")
for batch_idx in range(4):
    data, target = torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,))
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(data), target)
    loss.backward()
    optimizer.step()
    train_loss.update(loss)  # expect: GF208
print(train_loss.sum.grad_fn, train_loss.avg.item())
