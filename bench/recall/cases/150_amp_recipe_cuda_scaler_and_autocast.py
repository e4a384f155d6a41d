"""Source: https://github.com/pytorch/tutorials/pull/3257
Title: change torch.cuda.amp.GradScaler to torch.GradScaler("cuda")
What went wrong: the mixed-precision recipe creates its scaler with `torch.cuda.amp.GradScaler()`,
which now emits a FutureWarning; the PR replaces it with `torch.GradScaler("cuda")`.
runs: emits FutureWarning (`torch.cuda.amp.GradScaler(args...)` is deprecated); without CUDA the scaler disables itself with a warning
scope: documented
"""
import torch
import torch.nn as nn


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers += [nn.Linear(in_size, in_size), nn.ReLU()]
    layers.append(nn.Linear(in_size, out_size))
    return nn.Sequential(*layers)


device = "cuda" if torch.cuda.is_available() else "cpu"
net = make_model(32, 8, 3).to(device)
opt = torch.optim.SGD(net.parameters(), lr=0.001)
loss_fn = nn.MSELoss()
scaler = torch.cuda.amp.GradScaler()  # expect: GF301

for epoch in range(2):
    for _ in range(3):
        x, y = torch.randn(16, 32, device=device), torch.randn(16, 8, device=device)
        with torch.autocast(device_type=device, dtype=torch.float16 if device == "cuda" else torch.bfloat16):
            loss = loss_fn(net(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
