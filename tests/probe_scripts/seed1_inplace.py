"""The first seed's scenario, runnable on CPU (CUDA and AMP when present): `f /=` on a tensor norm() saved."""
import torch, torch.nn as nn, torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.fc = nn.Linear(16, 1)

    def forward(self, x):
        f = self.feat(x)              # [B, 16]
        f_log = f.detach()            # kept for logging
        f /= (f.norm(dim=1, keepdim=True) + 1e-6)   # in-place normalisation
        return self.fc(f).squeeze(-1)


net = Net().to(device)
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device, enabled=device == "cuda")


def l2_sp_regularizer(m: nn.Linear, tau=1e-4):
    with torch.no_grad():
        m.weight.data = torch.clamp(m.weight.data, -1.0, 1.0)
    return tau * (m.weight.abs().mean())


for step in range(20):
    x = torch.randn(8, 3, 16, 16, device=device)
    y = (torch.rand(8, device=device) > 0.5).float()
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device, enabled=device == "cuda"):
        logits = net(x)
        base = F.binary_cross_entropy_with_logits(logits, y)
        reg = l2_sp_regularizer(net.fc, 1e-4)
        loss = base + reg
    scaler.scale(loss).backward()
    scaler.step(opt); scaler.update()
