"""Healthy: fine-tuning a new head on a frozen backbone; the optimizer gets only trainable parameters and the
backbone's batch norm is kept in eval mode on purpose while the model trains."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Finetune(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 32))
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, 4))

    def forward(self, x):
        return self.head(self.backbone(x))


model = Finetune()
model.backbone.requires_grad_(False)
opt = torch.optim.Adam((p for p in model.parameters() if p.requires_grad), lr=1e-3)
model.train()
model.backbone.eval()
for step in range(6):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
