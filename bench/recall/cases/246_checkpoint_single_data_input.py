"""Source: https://github.com/pytorch/pytorch/issues/6884
Title: [checkpoint] Handle requires_grad not explicitly set for checkpoint inputs
What went wrong: when a checkpointed block's only input is the data batch (no `requires_grad`), the
reentrant checkpoint returns an output that does not require grad, so the block's parameters get
no gradient unless the user sets `requires_grad=True` on the input by hand.
runs: warns "None of the inputs have requires_grad=True. Gradients will be None" and the first block's weight .grad stays None (the run prints it)
scope: documented
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

block1 = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32))
head = nn.Linear(32, 2)
optimizer = torch.optim.SGD(list(block1.parameters()) + list(head.parameters()), lr=0.1)
x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
h = checkpoint(block1, x)  # expect: GF306
loss = nn.functional.cross_entropy(head(h), y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print(block1[0].weight.grad)
