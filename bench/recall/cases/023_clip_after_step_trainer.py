"""Source: https://github.com/awslabs/graphstorm/issues/1366
Title: possible max_grad_norm implementation error
What went wrong: the node-prediction trainer clips gradients (controlled by --max-grad-norm)
after `optimizer.step()`, so the option silently does nothing.
runs: trains but max_grad_norm has no effect
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class NodePredictionTrainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def fit(self, loader, num_epochs, max_grad_norm=None, grad_norm_type=2.0):
        for epoch in range(num_epochs):
            for feats, labels in loader:
                logits = self.model(feats)
                loss = F.cross_entropy(logits, labels)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                if max_grad_norm is not None:
                    torch.nn.utils.clip_grad_norm_(  # expect: GF206
                        self.model.parameters(), max_grad_norm, grad_norm_type
                    )


if __name__ == "__main__":
    trainer = NodePredictionTrainer(nn.Linear(24, 5))
    data = [(torch.randn(10, 24), torch.randint(0, 5, (10,))) for _ in range(3)]
    trainer.fit(data, num_epochs=2, max_grad_norm=1.0)
