# GF103 negative: gradients cleared by hand through `.grad.data` after the
# forward pass. That writes the gradient buffers, not the weights, and it
# runs before backward() fills them, so it is an ordinary zero_grad.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in [(torch.randn(4, 5), torch.randint(0, 2, (4,))) for _ in range(3)]:
    logits = net(x)
    for p in net.parameters():
        if p.grad is not None:
            p.grad.data.zero_()
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
