"""Source: https://github.com/google/brax/pull/152
Title: Remove "memory leak" in PyTorch training example
What went wrong: the PyTorch training example sums each update's loss into `total_loss`
without converting it, so the running total holds a grad_fn chaining every update's graph;
the PR changes it to `float(loss)`.
runs: trains; `total_loss` ends as a tensor with a grad_fn that references every iteration's graph
scope: documented
"""
import torch
import torch.nn as nn

policy = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 4))
value = nn.Linear(12, 1)
optimizer = torch.optim.Adam(list(policy.parameters()) + list(value.parameters()), lr=3e-4)

total_loss = 0
for update in range(20):
    obs = torch.randn(64, 12)
    returns = torch.randn(64, 1)
    optimizer.zero_grad()
    logp = torch.log_softmax(policy(obs), dim=-1).max(dim=-1).values
    adv = returns - value(obs)
    loss = -(logp * adv.detach().squeeze(1)).mean() + adv.pow(2).mean()
    loss.backward()
    optimizer.step()
    total_loss += loss  # expect: GF208
print("mean loss", total_loss / 20)
