# GF308 positive: the softmax branch is guarded by a flag whose default is on,
# and the training call leaves it at the default (also positionally: the call
# below passes only the input).
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, return_probs=True):
        h = self.fc(x)
        if return_probs:
            h = torch.softmax(h, dim=-1)
        return h


net = Net()
ce = nn.CrossEntropyLoss()
opt = torch.optim.Adam(net.parameters())
for _ in range(5):
    x, y = torch.randn(3, 8), torch.randint(0, 4, (3,))
    loss = ce(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
