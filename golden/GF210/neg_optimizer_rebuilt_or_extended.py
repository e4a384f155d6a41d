# GF210 negative: the head is replaced after an optimizer was built, but the
# optimizer is rebuilt afterwards, or the new head is added as a param group.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

model = torchvision.models.resnet18(weights=None)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model.fc = nn.Linear(512, 5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

other = torchvision.models.resnet18(weights=None)
opt2 = torch.optim.SGD(other.parameters(), lr=0.01)
other.fc = nn.Linear(512, 5)
opt2.add_param_group({"params": other.fc.parameters()})
loader = [(torch.randn(2, 3, 64, 64), torch.randint(0, 5, (2,))) for _ in range(10)]

for x, y in loader:
    for m, o in ((model, optimizer), (other, opt2)):
        o.zero_grad()
        F.cross_entropy(m(x), y).backward()
        o.step()
