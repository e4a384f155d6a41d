"""Source: https://github.com/APPFL/APPFL/issues/197
Title: Update client optimizers (moving clipping part before weights update)
What went wrong: the federated client's local update runs backward(), steps the optimizer
and only then calls `clip_grad_norm_`, so the clipped gradients are never used by the step.
runs: trains; clipping has no effect on any update
scope: documented
"""
import torch
import torch.nn as nn


class ClientOptim:
    def __init__(self, model, clip_value=1.0, local_steps=3):
        self.model = model
        self.clip_value = clip_value
        self.local_steps = local_steps
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.loss_fn = nn.CrossEntropyLoss()

    def update(self, loader):
        self.model.train()
        for _ in range(self.local_steps):
            for data, target in loader:
                self.optimizer.zero_grad()
                loss = self.loss_fn(self.model(data), target)
                loss.backward()
                self.optimizer.step()
                if self.clip_value:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_value)  # expect: GF206
        return self.model.state_dict()


if __name__ == "__main__":
    client = ClientOptim(nn.Linear(10, 3))
    client.update([(torch.randn(5, 10), torch.randint(0, 3, (5,))) for _ in range(2)])
