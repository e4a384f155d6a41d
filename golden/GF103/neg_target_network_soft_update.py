# GF103 negative: a Polyak update of a target network through .data, between the
# forward pass and backward(). The target network is used only under no_grad and
# is not in the optimizer, so nothing the pending backward saved depends on it.
import torch
import torch.nn as nn

qnet = nn.Linear(4, 2)
target = nn.Linear(4, 2)
opt = torch.optim.Adam(qnet.parameters(), lr=1e-3)
tau = 0.005

for obs, nxt in [(torch.randn(8, 4), torch.randn(8, 4)) for _ in range(3)]:
    with torch.no_grad():
        td_target = 1 + 0.99 * target(nxt).max(1)[0]
    loss = ((qnet(obs).max(1)[0] - td_target) ** 2).mean()
    for tp, p in zip(target.parameters(), qnet.parameters()):
        tp.data.copy_(tau * p.data + (1 - tau) * tp.data)
    opt.zero_grad()
    loss.backward()
    opt.step()
