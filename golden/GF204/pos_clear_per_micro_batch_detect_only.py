# GF204 positive without a fix: a batch is split into micro-batches whose
# gradients should add up before the single step, but the clear sits inside the
# micro-batch loop. Each pass wipes the passes before it: the step only ever
# sees the last micro-batch's gradient (scaled down by the split count).
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
opt = torch.optim.Adam(net.parameters(), lr=3e-4)
splits = 4


def train(batches):
    for batch in batches:
        for piece in torch.split(batch, batch.shape[0] // splits):
            opt.zero_grad()
            loss = (net(piece) - piece).pow(2).mean() / splits
            loss.backward()
        opt.step()
