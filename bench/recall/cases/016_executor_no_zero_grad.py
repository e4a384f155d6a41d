"""Source: https://github.com/wenet-e2e/wekws/pull/73
Title: [fix bug] add optimizer.zero_grad() in kws/utils/executor.py (#72)
What went wrong: the executor's training loop called backward, clipped and stepped the
optimizer, but never zeroed the gradients.
runs: trains but gradients accumulate over the whole epoch
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Executor:
    def train(self, model, optimizer, data_loader, clip=5.0):
        model.train()
        for batch_idx, (feats, target) in enumerate(data_loader):
            logits = model(feats)
            loss = F.binary_cross_entropy_with_logits(logits.mean(dim=1), target)
            loss.backward()  # expect: GF205
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), clip)
            if torch.isfinite(grad_norm):
                optimizer.step()


if __name__ == "__main__":
    kws = nn.GRU(40, 2, batch_first=True)

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = kws

        def forward(self, x):
            return self.rnn(x)[0]

    m = Wrap()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    data = [(torch.randn(4, 50, 40), torch.rand(4, 2)) for _ in range(3)]
    Executor().train(m, opt, data)
