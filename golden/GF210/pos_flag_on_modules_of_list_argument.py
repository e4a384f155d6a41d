import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
        self.neck = nn.Conv2d(8, 8, 1)
        self.cls = nn.Linear(8, 5)

    def forward(self, x):
        return self.cls(self.neck(self.backbone(x)).mean((2, 3)))


def lock(parts):
    for part in parts:
        part.requires_grad = False


det = Detector()
lock((det.backbone, det.neck))
opt = torch.optim.Adam(det.parameters(), lr=1e-3)
