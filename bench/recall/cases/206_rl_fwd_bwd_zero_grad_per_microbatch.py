"""Source: https://github.com/pytorch/torchtitan/pull/3575
Title: [rl][bug] Fix gradient accumulation zero grad
What went wrong: the RL trainer exposes `forward_backward(microbatch)` and `optim_step()`; the
controller calls `forward_backward` once per micro-batch and `optim_step` after the last one, but
`forward_backward` clears the gradients at its start, so the step uses only the last micro-batch
instead of the accumulated batch (the fix moves `zero_grad` next to the optimizer step).
runs: trains; the step's gradient equals the last micro-batch's gradient alone
scope: extension
"""
import torch
import torch.nn as nn


class RLTrainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Embedding(32, 16), nn.Flatten(), nn.Linear(16 * 4, 32))
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-5)

    def forward_backward(self, tokens, actions, advantages, n_micro):
        self.optimizer.zero_grad()  # expect: GF204
        logp = torch.log_softmax(self.model(tokens), -1).gather(1, actions[:, None]).squeeze(1)
        loss = -(logp * advantages).mean() / n_micro
        loss.backward()
        return loss.item()

    def optim_step(self):
        self.optimizer.step()


trainer = RLTrainer()
microbatches = [(torch.randint(0, 32, (2, 4)), torch.randint(0, 32, (2,)), torch.randn(2)) for _ in range(4)]
for _ in range(2):
    for tokens, actions, adv in microbatches:
        trainer.forward_backward(tokens, actions, adv, len(microbatches))
    trainer.optim_step()
