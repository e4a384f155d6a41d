"""Source: https://github.com/replicate/cog/issues/1681
Title: Unable to compute gradient in during inference
What went wrong: a prediction entry point that fine-tunes a model ran under an
`inference_mode` decorator, so no graph was recorded; forcing `requires_grad_` on the loss
hid the error but every parameter gradient stayed None.
runs: trains but nothing learns (grads None, loss constant)
scope: extension (grad disabled by a decorator on the enclosing function)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Predictor:
    def setup(self):
        self.model = nn.Linear(10, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    @torch.inference_mode()
    def predict(self, x, y, steps=5):
        for _ in range(steps):
            self.optimizer.zero_grad()
            out = self.model(x)  # expect: GF212
            loss = F.mse_loss(out, y)
            loss.requires_grad_(True)
            loss.backward()
            self.optimizer.step()
        return out


if __name__ == "__main__":
    p = Predictor()
    p.setup()
    try:
        p.predict(torch.randn(4, 10), torch.randn(4, 1))
    except RuntimeError as e:
        print("RuntimeError:", e)
