# GF302 negative: Variables without requires_grad are plain tensors; moving them
# copies nothing that trains.
import torch
from torch.autograd import Variable

a = Variable(torch.ones(4)).cuda()
b = Variable(torch.arange(4.0), requires_grad=False).cuda()
print((a * b).sum())
