# GF101 positive: the name of an imported module is rebound to a list, so `queue` is a
# real container here and keeps the activation the in-place op then changes.
import queue

import torch

queue = []
weight = torch.randn(4, 4, requires_grad=True)
batch = torch.randn(2, 4)
hidden = torch.add(torch.matmul(batch, weight), 1.0)
queue.append(hidden)
hidden = hidden.mul(0.5)
loss = hidden.sum() + queue[0].mean()
loss.backward()
