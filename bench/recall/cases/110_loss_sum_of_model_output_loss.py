"""Source: https://github.com/ray-project/ray/pull/40940
Title: Make sure that loss can be freed after every iteration
What went wrong: in a fine-tuning loop the model returns an output object whose `.loss` is
backpropagated, and the loop adds that tensor into `loss_sum` for logging; the graph of every
step stayed alive (a memory leak in the training template). The fix adds `.item()`.
runs: trains; `loss_sum` keeps every step's graph
scope: documented
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LMOutput:
    loss: torch.Tensor
    logits: torch.Tensor


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        logits = self.head(self.emb(input_ids))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
        return LMOutput(loss=loss, logits=logits)


def training_function(steps=4):
    model = TinyLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_sum = 0.0
    for step in range(steps):
        ids = torch.randint(0, 50, (2, 8))
        batch = {"input_ids": ids, "labels": ids}
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss_sum += loss  # expect: GF208
    return loss_sum / steps


if __name__ == "__main__":
    print(training_function())
