"""Source: https://github.com/pytorch/pytorch/issues/1053
Title: submodules defined in list are not auto-registered as parameters
What went wrong: three Conv1d filters are stored in a plain list; after `net.cuda()` they stay
on the CPU, and they are missing from parameters() as well.
runs: on a CUDA machine raises a device-mismatch error in forward; on CPU trains but the convs never update
scope: documented
"""
import torch
import torch.nn as nn

WORD_VEC_SIZE = 50


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = [  # expect: GF304
            nn.Conv1d(WORD_VEC_SIZE, 1, 3),
            nn.Conv1d(WORD_VEC_SIZE, 1, 4),
            nn.Conv1d(WORD_VEC_SIZE, 1, 5),
        ]
        self.out = nn.Linear(3, 2)

    def forward(self, x):
        pooled = [conv(x).max(dim=2).values for conv in self.conv1d]
        return self.out(torch.cat(pooled, dim=1))


net = Net()
if torch.cuda.is_available():
    net = net.cuda()
print(net(torch.randn(4, WORD_VEC_SIZE, 20)).shape)
