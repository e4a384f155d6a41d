# GF203 positive: each pass of the outer loop backpropagates once per ensemble member in
# an inner loop and steps the shared optimizer after it. The StepLR is stepped at the top
# of the pass, so it always runs before that pass's optimizer step (PyTorch warns).
import torch
import torch.nn as nn

members = [nn.Linear(6, 1) for _ in range(3)]
inputs = torch.randn(4, 6, requires_grad=True)
opt = torch.optim.Adam([inputs], lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

for it in range(8):
    sched.step()
    opt.zero_grad()
    for member in members:
        loss = member(inputs).pow(2).mean()
        loss.backward()
    opt.step()
