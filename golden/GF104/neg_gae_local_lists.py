"""The same GAE weight with the rollout in local lists filled by `append` in the step: the lists hold the
network's outputs, so the loss carries gradient and the `.data` reads only weight the log-probabilities."""
import torch
import torch.nn as nn
import torch.nn.functional as F

body = nn.Linear(4, 16)
heads = nn.Linear(16, 3)
optimizer = torch.optim.RMSprop(list(body.parameters()) + list(heads.parameters()), lr=7e-4)

for update in range(20):
    values, log_probs, rewards = [], [], []
    for t in range(6):
        out = heads(torch.tanh(body(torch.randn(1, 4))))
        values.append(out[:, :1])
        log_probs.append(F.log_softmax(out[:, 1:], dim=1)[:, 0])
        rewards.append(0.5)
    values.append(torch.zeros(1, 1))
    actor_loss = 0
    critic_loss = 0
    advantage = torch.zeros(1, 1)
    ret = torch.zeros(1, 1)
    for i in reversed(range(len(rewards))):
        ret = 0.9 * ret + rewards[i]
        critic_loss = critic_loss + (ret - values[i]).pow(2)
        delta = rewards[i] + 0.9 * values[i + 1].data - values[i].data
        advantage = advantage * 0.9 * 0.95 + delta
        actor_loss = actor_loss - log_probs[i] * advantage
    optimizer.zero_grad()
    (actor_loss + 0.5 * critic_loss).sum().backward()
    optimizer.step()
