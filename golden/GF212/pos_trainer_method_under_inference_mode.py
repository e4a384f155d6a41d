# GF212 positive: a trainer's adaptation method carries an inference_mode
# decorator (copied from its predict method), so no graph is recorded for the
# model it fine-tunes. The optimizer lives on the trainer (`self.opt`, built in
# another method); backward() cannot reach the model's parameters.
import torch
import torch.nn as nn


class Adapter:
    def __init__(self):
        self.net = nn.Linear(5, 3)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    @torch.inference_mode()
    def adapt(self, batches):
        for x, target in batches:
            self.opt.zero_grad()
            pred = self.net(x)
            loss = (pred - target).abs().mean()
            loss.backward()
            self.opt.step()
