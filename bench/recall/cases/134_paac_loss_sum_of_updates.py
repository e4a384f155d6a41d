"""Source: https://github.com/qbx2/PAAC.pytorch/issues/1
Title: Too late memory free
What went wrong: the actor-critic trainer adds each update's loss Variable into `loss_sum` for
logging, so the memory of every update's graph is held until the sum is dropped; the fix
adds the plain number (`loss.data[0]` then, `loss.item()` now).
runs: trains; `loss_sum` is a tensor with a grad_fn holding every update's graph
scope: documented
"""
import torch
import torch.nn as nn


class ActorCritic(nn.Module):
    def __init__(self, n_obs=8, n_act=3):
        super().__init__()
        self.body = nn.Linear(n_obs, 32)
        self.pi = nn.Linear(32, n_act)
        self.v = nn.Linear(32, 1)

    def forward(self, obs):
        h = torch.relu(self.body(obs))
        return torch.log_softmax(self.pi(h), -1), self.v(h).squeeze(-1)


net = ActorCritic()
optimizer = torch.optim.RMSprop(net.parameters(), lr=7e-4)
loss_sum = 0
for step in range(1, 31):
    obs, actions, returns = torch.randn(16, 8), torch.randint(0, 3, (16,)), torch.randn(16)
    log_probs, values = net(obs)
    advantage = returns - values
    chosen = log_probs.gather(1, actions[:, None]).squeeze(1)
    loss = -(chosen * advantage.detach()).mean() + 0.5 * advantage.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss_sum += loss  # expect: GF208
    if step % 10 == 0:
        print(step, loss_sum / 10)
        loss_sum = 0
