"""Source: https://github.com/open-mmlab/OpenPCDet/issues/845
Title: fail to freeze some layers with the adam_onecycle optimizer
What went wrong: the user "froze" the 3D backbone by running its forward under
`torch.no_grad()` but left its parameters in the optimizer, whose weight decay keeps
changing them every step.
runs: trains but the backbone weights drift (decoupled weight decay on params with no grad)
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone_3d = nn.Sequential(nn.Linear(4, 32), nn.ReLU())
        self.dense_head = nn.Linear(32, 7)

    def forward(self, points):
        with torch.no_grad():
            feats = self.backbone_3d(points)  # expect: GF212
        return self.dense_head(feats)


model = Detector()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
for _ in range(3):
    pts, boxes = torch.randn(64, 4), torch.randn(64, 7)
    optimizer.zero_grad()
    loss = F.smooth_l1_loss(model(pts), boxes)
    loss.backward()
    optimizer.step()
