# GF302 positive: an old-style Variable leaf moved to the accelerator in the same
# expression; `w.grad` after backward is the copy's, always None.
import torch
from torch.autograd import Variable

w = Variable(torch.zeros(6)).cuda().requires_grad_()
loss = (w - 1.0).pow(2).sum()
loss.backward()
print(w.grad)
