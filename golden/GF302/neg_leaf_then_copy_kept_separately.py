# GF302 negative: the leaf is kept under its own name and the copy is a separate
# value (the gradient reaches `w`, which is what the optimizer holds).
import torch

w = torch.randn(3, 3, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
w_half = w.half()
with torch.no_grad():
    frozen = torch.randn(3, requires_grad=True).cuda()
