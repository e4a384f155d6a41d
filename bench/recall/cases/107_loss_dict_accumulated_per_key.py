"""Source: https://github.com/jokester-zzz/SSA-SC/issues/2
Title: Continuous rising of GPU memory
What went wrong: the loss function returns a dict of loss tensors (the total and its parts),
and the epoch statistics add `losses[key]` for every key, without `.item()`; GPU memory rises
through the epoch. The maintainer agreed to take `.item()`.
runs: trains; every entry of `epoch_losses` becomes a tensor that keeps the epoch's graphs
scope: extension (the accumulator is a dict entry and the loss a dict value)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SceneNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(20, 32)
        self.seg = nn.Linear(32, 4)
        self.occ = nn.Linear(32, 1)

    def forward(self, x):
        h = F.relu(self.enc(x))
        return self.seg(h), self.occ(h)

    def compute_loss(self, scores, seg_target, occ_target):
        seg, occ = scores
        losses = {"seg": F.cross_entropy(seg, seg_target),
                  "occ": F.binary_cross_entropy_with_logits(occ.squeeze(1), occ_target)}
        losses["total"] = losses["seg"] + losses["occ"]
        return losses


def train_epoch(model, loader, optimizer):
    epoch_losses = {"seg": 0.0, "occ": 0.0, "total": 0.0}
    for x, seg_t, occ_t in loader:
        optimizer.zero_grad()
        losses = model.compute_loss(model(x), seg_t, occ_t)
        losses["total"].backward()
        optimizer.step()
        for key in losses:
            epoch_losses[key] += losses[key]  # expect: GF208
    return epoch_losses


if __name__ == "__main__":
    net = SceneNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    data = [(torch.randn(8, 20), torch.randint(0, 4, (8,)), torch.rand(8)) for _ in range(3)]
    print(train_epoch(net, data, opt))
