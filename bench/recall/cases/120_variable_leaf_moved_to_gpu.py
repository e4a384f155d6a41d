"""Source: https://github.com/pytorch/pytorch/issues/2730
Title: With backward method of CUDA Variables, grad is None if gradient is supplied
What went wrong: a Variable created with requires_grad=True is moved to the GPU in the same
expression; backward with an explicit gradient then leaves `x.grad` None, because `x` is an
intermediate node. The answer: keep the CPU leaf in its own name.
runs: on a CUDA machine prints None; on a CPU-only machine `.cuda()` raises
scope: extension (the leaf is made with the legacy `Variable` wrapper)
"""
import torch
from torch.autograd import Variable

x = Variable(torch.ones(10), requires_grad=True).cuda()  # expect: GF302
y = x * Variable(torch.linspace(1, 10, 10), requires_grad=False).cuda()
y.backward(torch.ones(10).cuda())
print(x.grad)
