# GF308 positive: the softmax-terminated nn.Sequential reaches CrossEntropyLoss
# through three wrappers beginner notebooks use: a layer list unpacked into
# nn.Sequential(*layers), a factory function that returns the Sequential, and
# torch.compile(model); also the factory's members kept in a list and trained in a loop
# over it. Each trains on doubly-softmaxed scores.
import torch
import torch.nn as nn


class ShrinkingNet(nn.Module):
    def __init__(self, n_in, n_out, depth=3):
        super().__init__()
        layers = []
        width = n_in
        for _ in range(depth):
            layers.append(nn.Linear(width, width // 2))
            layers.append(nn.PReLU())
            width //= 2
        layers.append(nn.Linear(width, n_out))
        layers.append(nn.Softmax(dim=1))
        self.stack = nn.Sequential(*layers)

    def forward(self, x):
        return self.stack(x)


def make_member(n_in, n_out):
    net = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_out), nn.Softmax(dim=1))
    return net


criterion = nn.CrossEntropyLoss()
x, y = torch.randn(16, 64), torch.randint(0, 4, (16,))

deep = ShrinkingNet(64, 4)
member = make_member(64, 4)
plain = nn.Sequential(nn.Linear(64, 4), nn.Softmax(dim=1))
plain = torch.compile(plain)
opt = torch.optim.Adam([*deep.parameters(), *member.parameters(), *plain.parameters()])
for _ in range(2):
    loss = criterion(deep(x), y) + criterion(member(x), y) + criterion(plain(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# an ensemble: several members from the factory, each trained in a loop over the list
members = [make_member(64, 4) for _ in range(3)]
for net in members:
    net_opt = torch.optim.Adam(net.parameters())
    loss = criterion(net(x), y)
    net_opt.zero_grad()
    loss.backward()
    net_opt.step()
