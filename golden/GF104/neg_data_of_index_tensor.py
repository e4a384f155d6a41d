# GF104 negative: `.data` read on integer action ids that only pick entries of the
# network's output (a subscript and a gather index). An index never carries
# gradient, so the term keeps all of its gradient through `atoms`.
import torch
import torch.nn as nn
import torch.nn.functional as F

N_ACTIONS, N_ATOMS = 3, 7
net = nn.Linear(5, N_ACTIONS * N_ATOMS)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)


def distribution_loss(obs, actions, target):
    acts = torch.tensor(actions)
    atoms = net(obs).view(-1, N_ACTIONS, N_ATOMS)
    chosen = atoms[range(len(actions)), acts.data]
    return -(F.log_softmax(chosen, dim=1) * target).sum(dim=1).mean()


def value_loss(obs, actions, returns):
    acts = torch.tensor(actions).unsqueeze(1)
    q = net(obs)[:, :N_ACTIONS].gather(1, acts.data).squeeze(1)
    return F.mse_loss(q, returns)


for update in range(20):
    obs = torch.randn(6, 5)
    actions = [0, 2, 1, 1, 0, 2]
    target = torch.full((6, N_ATOMS), 1.0 / N_ATOMS)
    opt.zero_grad()
    loss = distribution_loss(obs, actions, target) + value_loss(obs, actions, torch.zeros(6))
    loss.backward()
    opt.step()
