# GF302 positive: learnable prompts are drawn with requires_grad=True and scaled in
# the same expression; the name holds the product, which the optimizer refuses
# (a non-leaf). The fix puts the flag on the scaled tensor.
import torch

prompts = torch.randn(5, 16, requires_grad=True) * 0.02
opt = torch.optim.Adam([prompts], lr=1e-3)
for _ in range(3):
    opt.zero_grad()
    prompts.square().sum().backward()
    opt.step()
