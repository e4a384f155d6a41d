# GF212 positive: two optimizers step after one backward. `proj` has an
# optimizer of its own, `proj_opt`, that the loop steps every batch, yet the loop
# runs `proj` only under no_grad: its weights never receive a gradient, so
# `proj_opt.step()` never changes them and the projection stays at its random
# initialisation while the code reads as if it trained.
import torch
import torch.nn as nn
import torch.nn.functional as F

proj = nn.Sequential(nn.Linear(32, 16), nn.GELU())
classifier = nn.Linear(16, 5)
proj_opt = torch.optim.SGD(proj.parameters(), lr=0.01)
cls_opt = torch.optim.SGD(classifier.parameters(), lr=0.01)

for step in range(10):
    x, y = torch.randn(8, 32), torch.randint(0, 5, (8,))
    with torch.no_grad():
        z = proj(x)
    loss = F.cross_entropy(classifier(z), y)
    proj_opt.zero_grad()
    cls_opt.zero_grad()
    loss.backward()
    cls_opt.step()
    proj_opt.step()
