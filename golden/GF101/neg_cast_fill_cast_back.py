# GF101 negative: the half-precision masking idiom. The scores are cast up,
# filled in place and cast back in one statement that rebinds the same name;
# a Linear's output is not saved by its backward, and the name holds the
# statement's own result, not another copy of the old values.
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.to_scores = nn.Linear(dim, 1)

    def forward(self, h, pad_mask):
        scores = self.to_scores(h).squeeze(-1)
        scores = scores.float().masked_fill_(pad_mask, float("-inf")).type_as(scores)
        return torch.softmax(scores, dim=-1)
