# GF308 positive: the model applies softmax only under a flag, and the training
# loop turns the flag on, so cross_entropy receives probabilities.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(12, 6)

    def forward(self, x, as_probs=False):
        y = self.body(x)
        if as_probs:
            y = F.softmax(y, dim=1)
        return y


ranker = Ranker()
opt = torch.optim.SGD(ranker.parameters(), lr=0.05)
for it in range(30):
    x, target = torch.randn(5, 12), torch.randint(0, 6, (5,))
    pred = ranker(x, as_probs=True)
    loss = F.cross_entropy(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
