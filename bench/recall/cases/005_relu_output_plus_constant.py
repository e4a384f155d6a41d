"""Source: https://github.com/hehao13/EBLNet/issues/9
Title: i have a problem with pytorch version
What went wrong: a head adds a constant to a ReLU output with `z += 4`; the reporter found
this line was what produced the ReluBackward0 "is at version 1" error.
runs: raises RuntimeError (ReluBackward0 ... is at version 1) in backward()
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv1d(12, 12, 1)

    def forward(self, feats):
        z = F.relu(self.proj(feats))
        z += 4  # expect: GF101
        return z.log()


if __name__ == "__main__":
    head = Head()
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    loss = head(torch.randn(2, 12, 20)).mean()
    loss.backward()
    opt.step()
