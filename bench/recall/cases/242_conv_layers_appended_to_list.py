"""Source: https://github.com/pytorch/pytorch/issues/8017
Title: failed to move parameters to GPU
What went wrong: the model builds its convolutions in a loop, an empty list filled with
`append(nn.Conv2d(...))`; the plain list registers nothing, so `model.to("cuda")` leaves
the layers on the CPU and `model.parameters()` is empty (the answer: use `nn.Sequential` or
`nn.ModuleList`).
runs: runs; `list(model.parameters())` is empty and building an optimizer over it raises "optimizer got an empty parameter list"
scope: documented
"""
import torch
import torch.nn as nn


class Pyramid(nn.Module):
    def __init__(self, widths=(1, 4, 8, 16)):
        super().__init__()
        self.stages = []  # expect: GF304
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            self.stages.append(nn.Conv2d(c_in, c_out, kernel_size=3))

    def forward(self, x):
        for stage in self.stages:
            x = torch.relu(stage(x))
        return x


model = Pyramid()
print(len(list(model.parameters())), model(torch.randn(1, 1, 12, 12)).shape)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
