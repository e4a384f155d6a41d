"""Source: https://github.com/pytorch/pytorch/issues/94828
Title: Parameters transferred to GPU are ignored (nn.Parameter(tensor_t).cuda() is ignored)
What went wrong: next to a Linear layer, a module adds a learnable offset written as
`nn.Parameter(torch.rand(10)).cuda()`; the `.cuda()` copy is a plain tensor, so `parameters()`
lists only the Linear layer's weight and bias and the offset is never optimised.
runs: on a CUDA machine `parameters()` lists only the Linear's weight and bias and the offset gets no gradient; on CPU `.cuda()` cannot run, so the script only prints that it needs CUDA
scope: documented
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = torch.nn.Parameter(torch.rand(10)).cuda()  # expect: GF303
        self.linear = torch.nn.Linear(10, 20)

    def forward(self, x):
        return self.linear(self.t + x)


if torch.cuda.is_available():
    m = Model().cuda()
    print(len(list(m.parameters())))
else:
    print("needs CUDA: nn.Parameter(...).cuda() cannot run on this machine")
