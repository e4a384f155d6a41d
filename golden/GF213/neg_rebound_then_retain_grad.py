# GF213 negative: the clamped tensor is a non-leaf, but the lesson asks autograd to keep
# its gradient with retain_grad(), so `w.grad` is filled after backward.
import torch

w = torch.ones(3, requires_grad=True)
w = torch.clamp(w, 0, 2) * 3
w.retain_grad()
loss = (w ** 2).sum()
loss.backward()
print(w.grad)
