# GF302 positive: an old-style Variable leaf moved to the accelerator in the same
# expression; `w.grad` after backward is the copy's, always None.
import torch
from torch.autograd import Variable

w = Variable(torch.zeros(6), requires_grad=True).cuda()
loss = (w - 1.0).pow(2).sum()
loss.backward()
print(w.grad)
