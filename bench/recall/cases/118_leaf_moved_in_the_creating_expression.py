"""Source: https://github.com/pytorch/pytorch/issues/8287
Title: [Bug] Failure to acquire gradient with requires_grad and backward(gradient) in cuda
What went wrong: the input is created with requires_grad=True and moved to the GPU in the
same expression, so the name holds a non-leaf copy and `x.grad` is None after the backward
pass; the answer: create it on the device (`device='cuda:0'`).
runs: on a CUDA machine prints `x: None`; on a CPU-only machine `.cuda()` raises
scope: documented
"""
import torch
import torch.nn as nn

x = torch.randn(2, 2, requires_grad=True).cuda(0)  # expect: GF302
t = torch.randn(2, 2).cuda(0)
loss_func = nn.MSELoss().cuda(0)
l1 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).cuda(0)
l2 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).cuda(0)
h1 = l1(x)
h2 = h1.detach().requires_grad_()
loss = loss_func(l2(h2), t)
loss.backward()
h1.backward(gradient=h2.grad)
print("x:", x.grad)
