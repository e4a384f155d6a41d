"""Source: https://github.com/bubbliiiing/yolo3-pytorch/issues/3
Title: loss累积写法 可能会导致显存溢出 (the way the loss is accumulated may exhaust GPU memory)
What went wrong: the per-epoch training function adds each batch's loss tensor into
`total_loss` (a pre-0.4 habit); after 0.4 this keeps every batch's graph alive, and the report
asks for `+= loss.item()`.
runs: trains; `total_loss` is a tensor whose grad_fn chains the graphs of the whole epoch
scope: documented
"""
import torch
import torch.nn as nn


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.LeakyReLU(0.1))
        self.head = nn.Conv2d(8, 15, 1)

    def forward(self, img):
        return self.head(self.backbone(img))


def fit_one_epoch(net, optimizer, batches):
    total_loss = 0
    for images, targets in batches:
        optimizer.zero_grad()
        outputs = net(images)
        loss = nn.functional.mse_loss(outputs, targets)
        loss.backward()
        optimizer.step()
        total_loss += loss  # expect: GF208
    return total_loss / len(batches)


if __name__ == "__main__":
    net = TinyDetector()
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    data = [(torch.randn(2, 3, 17, 17), torch.randn(2, 15, 8, 8)) for _ in range(4)]
    print(fit_one_epoch(net, opt, data))
