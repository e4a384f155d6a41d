"""Source: https://github.com/huggingface/transformers/pull/6999
Title: fixed trainer tr_loss memory leak
What went wrong: the trainer's `training_step` runs `loss.backward()` and returns the loss tensor
itself, and the training loop accumulates it with `tr_loss += self.training_step(...)`; the
running total keeps every step's graph alive, and RAM grows until the run dies (the fix
accumulates a detached tensor).
runs: trains; `tr_loss` carries a grad_fn chaining every step's graph (the run prints it)
scope: extension
"""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

    def training_step(self, inputs, labels):
        self.model.train()
        loss = nn.functional.cross_entropy(self.model(inputs), labels)
        loss.backward()
        return loss

    def train(self, dataloader, epochs=2):
        tr_loss = torch.tensor(0.0)
        for _ in range(epochs):
            for inputs, labels in dataloader:
                tr_loss += self.training_step(inputs, labels)  # expect: GF208
                self.optimizer.step()
                self.model.zero_grad()
        return tr_loss


trainer = Trainer(nn.Sequential(nn.Linear(12, 24), nn.GELU(), nn.Linear(24, 3)))
total = trainer.train([(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(5)])
print(total.grad_fn)
