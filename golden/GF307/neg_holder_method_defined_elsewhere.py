# GF307 negative: the model class comes from another module, so what `net.refine(...)` runs is unknown here;
# it may run the trained `net.head`, so the refinement term is not shown to be gradient-free.
import torch
import torch.nn.functional as F

from mypackage.models import TwoStageNet


net = TwoStageNet()
head_opt = torch.optim.SGD(net.head.parameters(), lr=0.01)
for step in range(3):
    x, y = torch.randn(4, 10), torch.randn(4, 2)
    coarse = net.head(net.trunk(x).detach())
    refined = net.refine(coarse.detach())
    loss = F.mse_loss(coarse, y) + 0.1 * F.mse_loss(refined, y)
    head_opt.zero_grad()
    loss.backward()
    head_opt.step()
