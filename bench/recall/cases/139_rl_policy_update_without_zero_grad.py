"""Source: https://github.com/meta-pytorch/torchforge/pull/71
Title: [ez] zero grad every step
What went wrong: the training actor's step function computes the loss, runs backward() and
steps the optimizer, but never clears gradients, so every step adds onto the previous ones;
the fix zeroes the gradients after each step.
runs: trains; gradients accumulate over all steps
scope: documented
"""
import torch
import torch.nn as nn


class TrainerActor:
    def __init__(self):
        self.model = nn.Sequential(nn.Embedding(50, 16), nn.Flatten(), nn.Linear(16 * 6, 50))
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def train_step(self, tokens, targets, advantages):
        logits = self.model(tokens)
        logp = torch.log_softmax(logits, -1).gather(1, targets[:, None]).squeeze(1)
        loss = -(logp * advantages).mean()
        loss.backward()  # expect: GF205
        self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    actor = TrainerActor()
    for _ in range(4):
        actor.train_step(torch.randint(0, 50, (8, 6)), torch.randint(0, 50, (8,)), torch.randn(8))
