"""Source: https://github.com/ZiqiaoPeng/DualTalk/issues/9
Title: Gradient accumulation
What went wrong: the training loop calls `optimizer.zero_grad()` right before every
`loss.backward()` while stepping only when `i % gradient_accumulation_steps == 0`, so the
gradients of the batches in between are thrown away.
runs: trains; each optimizer step uses a single batch's gradient
scope: documented
"""
import torch
import torch.nn as nn


def trainer(model, train_loader, optimizer, gradient_accumulation_steps=4, epochs=2):
    loss_log = []
    for epoch in range(epochs):
        for i, (audio, motion) in enumerate(train_loader):
            pred = model(audio)
            loss = nn.functional.mse_loss(pred, motion)
            optimizer.zero_grad()  # expect: GF204
            loss.backward()
            loss_log.append(loss.item())
            if i % gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
    return loss_log


if __name__ == "__main__":
    model = nn.GRU(12, 6, batch_first=True)
    wrapped = lambda a: model(a)[0]
    loader = [(torch.randn(2, 10, 12), torch.randn(2, 10, 6)) for _ in range(8)]
    trainer(wrapped, loader, torch.optim.Adam(model.parameters(), lr=1e-4))
