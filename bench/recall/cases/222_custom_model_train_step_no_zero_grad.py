"""Source: https://github.com/fchollet/deep-learning-with-python-notebooks/issues/293
Title: chapter 7 torch implementation of CustomModel forgets to zero_grad
What went wrong: the custom model's PyTorch `train_step` computes the loss, calls `backward()` and
steps the optimizer, but never clears the gradients, so every step adds the gradients of all
earlier batches ("the results are terrible"); the fit loop calls it once per batch.
runs: trains; the gradient at step k is the sum of k batch gradients (the run prints the growing grad norm)
scope: documented
"""
import torch
import torch.nn as nn


class CustomModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 10))
        self.optimizer = torch.optim.RMSprop(self.parameters(), lr=1e-3)
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.body(x)

    def train_step(self, data):
        inputs, targets = data
        loss = self.loss_fn(self(inputs), targets)
        loss.backward()  # expect: GF205
        self.optimizer.step()
        return loss.item()


model = CustomModel()
dataset = [(torch.randn(16, 20), torch.randint(0, 10, (16,))) for _ in range(5)]
for epoch in range(2):
    for batch in dataset:
        model.train_step(batch)
    print(epoch, model.body[0].weight.grad.norm().item())
