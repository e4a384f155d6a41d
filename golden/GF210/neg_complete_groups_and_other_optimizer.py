# GF210 negative: parameter groups that cover every submodule with
# parameters, and a submodule left out of one optimizer but given to another
# (or frozen on purpose).
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)
        self.aux = nn.Linear(16, 2)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h = self.drop(self.backbone(x))
        return self.head(h), self.aux(h)


model = Net()
full = torch.optim.SGD([
    {"params": model.backbone.parameters(), "lr": 1e-3},
    {"params": model.head.parameters()},
    {"params": model.aux.parameters()},
], lr=1e-2)
main_opt = torch.optim.Adam(list(model.backbone.parameters()) + list(model.head.parameters()))
aux_opt = torch.optim.Adam(model.aux.parameters())

frozen = Net()
frozen.aux.requires_grad_(False)
partial = torch.optim.Adam(list(frozen.backbone.parameters()) + list(frozen.head.parameters()))
