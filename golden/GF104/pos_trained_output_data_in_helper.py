# GF104 positive: a helper reads `.data` of the output of the network it is
# given, which is the one the optimizer trains (an activity penalty on a fixed
# probe batch): the term it returns carries no gradient, so the penalty never
# reaches the network.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(6, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def activity(model):
    return model(torch.ones(2, 6)).data.pow(2).mean()


for _ in range(5):
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(net(x), y) + 0.1 * activity(net)
    opt.zero_grad()
    loss.backward()
    opt.step()
