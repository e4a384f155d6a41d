# GF306 positive: the first block is checkpointed and its input is data, which
# does not require grad. The reentrant variant (the default without the flag)
# then builds no graph through the block: its parameters get None gradients.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        h = checkpoint(self.block1, x)
        return self.head(h)


model = Net()
model(torch.randn(4, 16)).sum().backward()
