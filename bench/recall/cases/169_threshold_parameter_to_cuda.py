"""Source: https://github.com/pytorch/pytorch/issues/39062
Title: regarding to('cuda') in init
What went wrong: a custom layer creates its learnable threshold as
`nn.Parameter(torch.randn(1)).to('cuda')` in `__init__`; the `.to` result is an ordinary tensor,
so the model has no parameters and training silently never updates the threshold.
runs: on a CUDA machine `list(model.parameters())` is empty; on CPU `.to("cpu")` keeps the Parameter
scope: documented
"""
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class ThresholdLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.threshold = nn.Parameter(torch.randn(1)).to(device)  # expect: GF303

    def forward(self, x):
        return torch.relu(x - self.threshold)


model = nn.Sequential(ThresholdLayer()).to(device)
print(list(model.parameters()))
