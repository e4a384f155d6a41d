# GF307 negative: forwards that detach a returned value where no term of the
# loss depends on it alone. The detached features are only logged; an inference
# path under `if not self.training` detaches on purpose; and a term that still
# reads the prediction keeps its gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        h = torch.relu(self.enc(x))
        p = self.head(h)
        if not self.training:
            p = p.detach()
        return {"pred": p, "feat": h.detach()}


net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    out = net(x)
    loss = F.mse_loss(out["pred"], y) + 0.1 * (out["pred"] * out["feat"].mean()).pow(2).mean()
    print(out["feat"].norm().item())
    opt.zero_grad()
    loss.backward()
    opt.step()
