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
    # the module's own method sets the flag on every parameter
    for part in parts:
        part.requires_grad_(False)


def lock_params(parts):
    for part in parts:
        for p in part.parameters():
            p.requires_grad = False


def mark(items):
    # called with tensors: a tensor's flag is the real one
    for t in items:
        t.requires_grad = False


def mark_unknown(things):
    # the call passes a name, not a display: what the list holds is not read (left alone)
    for t in things:
        t.requires_grad = False


det = Detector()
lock([det.backbone, det.neck])
lock_params([det.backbone])
mark([torch.zeros(3), torch.ones(2)])
held = [det.backbone]
mark_unknown(held)
opt = torch.optim.Adam([p for p in det.parameters() if p.requires_grad], lr=1e-3)
