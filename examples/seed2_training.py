"""The second seed's training cell (golden/seeds/seed2_loop.py) with the cells it leaves out: the
model, loss function, optimizer, schedule and data that the notebook builds before it, here a small
multi-label classifier on random data so that the script runs on a CPU. The loss is divided by
1000000000 before backward(), which is why its gradient norm prints as 0.0000."""
import gc

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.set_printoptions(sci_mode=False)
torch.manual_seed(0)


class Samples(Dataset):
    """256 random feature vectors with 4 binary labels each, as dicts like the seed's batches."""

    def __init__(self, n=256):
        self.x = torch.randn(n, 20)
        self.y = (torch.rand(n, 4) > 0.5).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"inputs": self.x[i], "targets": self.y[i]}


epochs = 2
train_dataloader = DataLoader(Samples(), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4))
loss_fn = nn.BCEWithLogitsLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
# stepped per batch, as the seed does: right for a per-iteration schedule such as one-cycle
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=epochs * len(train_dataloader))

gradient_norms = []
losses = []

for epoch in range(epochs):
    model_path = f"ace_state_dict_{epoch+1}.pth"
    torch.save(model.state_dict(), model_path)
    model.train()
    total_loss = 0

    for batch_idx, batch in enumerate(train_dataloader):
        optimizer.zero_grad()
        logits = model(batch["inputs"])
        targets = batch["targets"]
        loss = loss_fn(logits.view(-1, logits.size(-1)), targets.float()) / 1000000000
        loss.backward()
        # Compute gradient norms
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1)
        gradient_norms.append(grad_norm)
        optimizer.step()
        scheduler.step()
        total_loss += loss.item()

        if batch_idx % 100 == 0:
            print(f'Batch {batch_idx}/{len(train_dataloader)}, Loss: {total_loss/(batch_idx+1)}, Gradient Norms: {grad_norm}')

    avg_loss = total_loss / len(train_dataloader)
    losses.append(avg_loss)
    print(f"Train loss: {avg_loss}")
    gc.collect()
