# GF101 positive: a head produces a mean and a log-scale in one tensor and splits
# it with `chunk`; each half is one of several views of that output, and the
# in-place clamp on one of them raises in the forward pass ("... returns multiple
# views ... modified inplace"). Rewrite: `log_scale = log_scale.clamp(-5.0, 2.0)`.
import torch
import torch.nn as nn


class GaussianHead(nn.Module):
    def __init__(self, features=10, out=3):
        super().__init__()
        self.proj = nn.Linear(features, 2 * out)

    def forward(self, h):
        mean, log_scale = self.proj(h).chunk(2, dim=1)
        log_scale.clamp_(-5.0, 2.0)
        return mean, log_scale.exp()


if __name__ == "__main__":
    mu, sigma = GaussianHead()(torch.randn(4, 10))
    (mu.sum() + sigma.sum()).backward()
