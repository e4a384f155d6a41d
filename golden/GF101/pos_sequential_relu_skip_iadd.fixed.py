# GF101 positive: a skip connection added in place onto the output of a
# Sequential whose last layer is nn.ReLU. ReLU keeps its output for backward
# (threshold_backward reads the result), so `feat += early` bumps the version
# of a saved tensor and backward() raises "modified by an inplace operation".
# A frame-prediction model of the kind used in imagination-based RL agents.
import torch
import torch.nn as nn


class FramePredictor(nn.Module):
    def __init__(self, planes=4):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(planes, 32, 3, padding=1), nn.ReLU())
        self.refine = nn.Sequential(
            nn.Conv2d(32, 32, 3, padding=1),
            nn.ReLU(),
        )
        self.decode = nn.ConvTranspose2d(32, 1, 1)

    def forward(self, frames):
        early = self.encode(frames)
        feat = self.refine(early)
        feat = feat + early
        return self.decode(feat)


model = FramePredictor()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    pred = model(torch.randn(2, 4, 8, 8))
    loss = pred.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
