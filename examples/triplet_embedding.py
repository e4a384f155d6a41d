# The siamese-triplet pattern: `output.pow(2)` saves `output`, so the in-place
# div_ breaks backward. The constructor needs an argument, so the verifier uses
# the fixture in gradfix_fixtures.py to build the module and its input.
import torch
import torch.nn as nn


class EmbeddingNetL2(nn.Module):
    def __init__(self, in_features, dim=2):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(in_features, 64), nn.PReLU(), nn.Linear(64, dim))

    def forward(self, x):
        output = self.fc(x)
        output.div_(output.pow(2).sum(1, keepdim=True).sqrt())
        return output
