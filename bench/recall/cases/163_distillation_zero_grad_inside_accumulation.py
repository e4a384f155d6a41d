"""Source: https://github.com/tientrandinh/Revisiting-Reverse-Distillation/issues/12
Title: Is it something wrong with grad acc?
What went wrong: the loop clears both optimizers' gradients before every backward() but
steps them only every `accumulation_steps` batches, so each step uses only the last batch's
gradient; the author moved the `zero_grad()` calls under the step condition.
runs: trains; the accumulation has no effect, every step sees one batch
scope: documented
"""
import torch
import torch.nn as nn

proj = nn.Conv2d(16, 16, 1)
student = nn.Conv2d(16, 16, 3, padding=1)
optimizer_proj = torch.optim.Adam(proj.parameters(), lr=1e-3)
optimizer_distill = torch.optim.Adam(student.parameters(), lr=5e-3)
accumulation_steps = 2
teacher_feats = [torch.randn(2, 16, 8, 8) for _ in range(6)]

for i, t in enumerate(teacher_feats):
    s = student(proj(t))
    loss = (1 - nn.functional.cosine_similarity(s.flatten(1), t.flatten(1))).mean()
    optimizer_proj.zero_grad()  # expect: GF204
    optimizer_distill.zero_grad()
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer_proj.step()
        optimizer_distill.step()
