import torch, torch.nn as nn, torch.nn.functional as F


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
        f_log = f.detach().clone()            # ❌ 为了可视化，提前 detach
        # …日志里用到了 f_log …
        # 原地归一化（in-place）
        f = f / (f.norm(dim=1, keepdim=True) + 1e-6)   # ❌ in-place 可能破坏版本计数
        return self.fc(f).squeeze(-1)


net = Net().cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")


def l2_sp_regularizer(m: nn.Linear, tau=1e-4):
    # 为了稀疏化，做了个软阈值
    return tau * (m.weight.abs().mean())  # 看似没问题


for step in range(200):
    x = torch.randn(64, 3, 224, 224, device="cuda")
    y = (torch.rand(64, device="cuda") > 0.5).float()
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", enabled=True):
        logits = net(x)
        base = F.binary_cross_entropy_with_logits(logits, y)
        reg  = l2_sp_regularizer(net.fc, 1e-4)
        loss = base + reg
    scaler.scale(loss).backward()   # ⬅️ 梯度经常是 None 或极小
    scaler.step(opt); scaler.update()
    with torch.no_grad():
        net.fc.weight.clamp_(-1.0, 1.0)
