# GF302 positive without a fix: the tensor is written in place later, which a
# leaf that requires grad does not allow, so only the finding is reported.
import torch

state = torch.zeros(4, requires_grad=True).cuda()
state[0] = 1.0
optimizer = torch.optim.SGD([state], lr=0.1)
