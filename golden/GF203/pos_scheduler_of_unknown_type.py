# GF203 positive with a scheduler handed in by the caller: its type is unknown,
# but any LR scheduler must step after the optimizer (TACJu/TransFG issue #9).
# The verifier renders a stand-in StepLR and says so.
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, lr_scheduler):
    model.train()
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        lr_scheduler.step()
        optimizer.step()
