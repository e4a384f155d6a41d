# GF202 negative: the second seed's situation. `scheduler` comes from the
# caller, so its type is unknown here: a per-batch step may be right (a warm-up
# or OneCycle schedule), and gradfix stays silent.
import torch


def train(model, optimizer, scheduler, loss_fn, train_dataloader, epochs):
    losses = []
    for epoch in range(epochs):
        model.train()
        total_loss = 0
        for batch_idx, batch in enumerate(train_dataloader):
            optimizer.zero_grad()
            logits = model(batch["inputs"])
            loss = loss_fn(logits, batch["targets"].float())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1)
            optimizer.step()
            scheduler.step()
            total_loss += loss.item()
        losses.append(total_loss / len(train_dataloader))
    return losses
