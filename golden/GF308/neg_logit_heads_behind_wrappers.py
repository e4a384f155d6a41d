# GF308 negative: the same wrappers where CrossEntropyLoss gets logits. The
# tuple model's softmax head is the element that is not passed to the loss; the
# layer list's softmax is appended only in a branch (for inference), so its last
# layer is not known; the factory returns a logits Sequential on one path; and
# the compiled model ends in a Linear.
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(64, 32)
        self.logits = nn.Linear(32, 4)
        self.probs = nn.Sequential(nn.Linear(32, 4), nn.Softmax(dim=1))

    def forward(self, x):
        h = self.trunk(x)
        return self.logits(h), self.probs(h)


class MaybeProbs(nn.Module):
    def __init__(self, for_inference=False):
        super().__init__()
        layers = [nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4)]
        if for_inference:
            layers.append(nn.Softmax(dim=1))
        self.stack = nn.Sequential(*layers)

    def forward(self, x):
        return self.stack(x)


def make_member(calibrated):
    if calibrated:
        return nn.Sequential(nn.Linear(64, 4), nn.Softmax(dim=1))
    return nn.Sequential(nn.Linear(64, 4))


criterion = nn.CrossEntropyLoss()
x, y = torch.randn(16, 64), torch.randint(0, 4, (16,))
heads = TwoHeads()
maybe = MaybeProbs()
member = make_member(False)
compiled = torch.compile(nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4)))
opt = torch.optim.Adam([*heads.parameters(), *maybe.parameters(), *member.parameters(), *compiled.parameters()])
for _ in range(2):
    logits, probs = heads(x)
    loss = criterion(logits, y) + criterion(maybe(x), y) + criterion(member(x), y) + criterion(compiled(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    confidence = probs.max(dim=1).values.mean()
