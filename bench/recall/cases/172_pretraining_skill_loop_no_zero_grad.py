"""Source: https://github.com/affaan-m/ECC/pull/3122
Title: feat: 17 book-derived mlops skills (Raschka + Huyen)
What went wrong: the pretraining loop in a skill document computes the batch loss with a helper,
calls backward() and steps the optimizer, but never clears gradients, so every update adds the
gradients of all earlier batches (the review asks for `optimizer.zero_grad()` per batch).
runs: trains; each step applies the sum of all gradients computed so far
scope: documented
"""
import torch
import torch.nn as nn


def calc_loss_batch(inputs, targets, model):
    logits = model(inputs)
    return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())


vocab, ctx = 40, 6
model = nn.Sequential(nn.Embedding(vocab, 16), nn.Linear(16, vocab))
optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.1)
train_loader = [(torch.randint(0, vocab, (2, ctx)), torch.randint(0, vocab, (2, ctx))) for _ in range(4)]
for epoch in range(2):
    model.train()
    for input_batch, target_batch in train_loader:
        loss = calc_loss_batch(input_batch, target_batch, model)
        loss.backward()  # expect: GF205
        optimizer.step()
    print(epoch, loss.item())
