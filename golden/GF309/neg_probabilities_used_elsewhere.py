"""Softmax probabilities computed for other uses (entropy bonus, confidence), while kl_div gets
log-probabilities; keywords given in either order; a model whose forward ends in LogSoftmax."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LogPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.out = nn.LogSoftmax(dim=-1)

    def forward(self, x):
        return self.out(self.fc(x))


def objective(policy, states, old_probs):
    log_p = policy(states)
    probs = log_p.exp()
    entropy = -(probs * log_p).sum(-1).mean()
    confidence = F.softmax(log_p, dim=-1).max(-1).values.mean()
    kl = F.kl_div(target=old_probs, input=log_p, reduction="batchmean")
    return kl - 0.01 * entropy, confidence


def run():
    policy = LogPolicy()
    s = torch.randn(5, 4)
    with torch.no_grad():
        old = policy(s).exp()
    loss, _ = objective(policy, s, old)
    loss.backward()
