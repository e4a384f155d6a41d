"""Source: https://github.com/pai4451/ML2021/issues/2
Title: HW7 Out of memory
What went wrong: the question-answering homework adds the model output's loss to the epoch total
with `train_loss += output.loss` and then backpropagates `output.loss`; the total keeps the
complete computation graph of every step, and CPU RAM grows until it runs out (64 GB in the
report); `output.loss.detach()` or `.item()` fixes it.
runs: trains; `train_loss` carries a grad_fn over all steps (the run prints it)
scope: extension
"""
from typing import NamedTuple

import torch
import torch.nn as nn


class QAOutput(NamedTuple):
    loss: torch.Tensor
    start_logits: torch.Tensor


class TinyQA(nn.Module):
    def __init__(self, vocab=40, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.qa = nn.Linear(dim, 2)

    def forward(self, input_ids, start_positions, end_positions):
        start, end = self.qa(self.emb(input_ids)).unbind(-1)
        loss = (nn.functional.cross_entropy(start, start_positions) + nn.functional.cross_entropy(end, end_positions)) / 2
        return QAOutput(loss, start)


model = TinyQA()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
train_loss = 0
for step in range(6):
    ids = torch.randint(0, 40, (4, 10))
    output = model(ids, torch.randint(0, 10, (4,)), torch.randint(0, 10, (4,)))
    train_loss += output.loss  # expect: GF208
    output.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print(train_loss.grad_fn)
