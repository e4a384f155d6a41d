"""Source: https://github.com/MultimediaTechLab/YOLO/pull/83
Title: [FIX] Fixes memory leak
What went wrong: the trainer keeps per-component loss totals in a `defaultdict` of zero
tensors and adds each batch's loss components, scaled by the batch size, without `.item()`;
about 1-2 MB of memory leaked per batch. The fix keeps plain floats and adds `.item()`.
runs: trains; the totals keep the graph of every batch of the epoch
scope: extension (the accumulator is a dict entry; the added values are the loss's terms)
"""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(16, 32)
        self.box = nn.Linear(32, 4)
        self.cls = nn.Linear(32, 5)

    def forward(self, x):
        h = F.relu(self.backbone(x))
        return self.box(h), self.cls(h)


def train_one_epoch(model, loader, optimizer):
    total_loss = defaultdict(lambda: torch.tensor(0.0))
    for images, boxes, labels in loader:
        pred_box, pred_cls = model(images)
        loss_dict = {"box": F.l1_loss(pred_box, boxes), "cls": F.cross_entropy(pred_cls, labels)}
        loss = sum(loss_dict.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for name, value in loss_dict.items():
            total_loss[name] += value * images.shape[0]  # expect: GF208
    return {k: v / len(loader) for k, v in total_loss.items()}


if __name__ == "__main__":
    net = Detector()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    data = [(torch.randn(4, 16), torch.randn(4, 4), torch.randint(0, 5, (4,))) for _ in range(3)]
    print(train_one_epoch(net, data, opt))
