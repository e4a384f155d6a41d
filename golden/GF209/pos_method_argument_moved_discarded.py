# GF209 positive: a method moves its tensor argument with `.cuda()` as a bare
# statement; the file's only call passes a tensor, so the move is lost. Detect
# only (a conversion's result must be assigned).
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 1)

    def score(self, batch):
        batch.cuda()
        return self.fc(batch)


net = Scorer()
out = net.score(torch.randn(3, 10))
