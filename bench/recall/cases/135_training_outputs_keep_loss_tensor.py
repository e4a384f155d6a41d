"""Source: https://github.com/TRI-ML/packnet-sfm/pull/51
Title: Fix memory leak
What went wrong: each training step's output dictionary, which is appended to the epoch's list
of outputs, carries the loss tensor itself; the list keeps every step's graph alive, and the
fix detaches the loss before it is appended.
runs: trains; every entry of `outputs` holds a loss with a grad_fn to its step's graph
scope: extension (the loss is kept by appending to a list, not by `+=`)
"""
import torch
import torch.nn as nn

depth_net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
optimizer = torch.optim.Adam(depth_net.parameters(), lr=2e-4)


def training_step(batch):
    pred = depth_net(batch["rgb"])
    loss = (pred - batch["depth"]).abs().mean()
    return {"loss": loss, "metrics": {"abs": loss.item()}}


outputs = []
for it in range(6):
    batch = {"rgb": torch.randn(2, 3, 16, 16), "depth": torch.rand(2, 1, 16, 16)}
    optimizer.zero_grad()
    out = training_step(batch)
    out["loss"].backward()
    optimizer.step()
    outputs.append(out)  # expect: GF208
print(sum(o["metrics"]["abs"] for o in outputs) / len(outputs))
