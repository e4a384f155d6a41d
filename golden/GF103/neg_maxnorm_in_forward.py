# GF103 negative: EEGNet-style max-norm layers. The renorm through `.data`
# runs at the top of forward, before the weight is used, so the gradients
# stay consistent with the forward that ran.
import torch
import torch.nn as nn


class Conv2dWithConstraint(nn.Conv2d):
    def __init__(self, *args, max_norm=1.0, **kwargs):
        self.max_norm = max_norm
        super().__init__(*args, **kwargs)

    def forward(self, x):
        self.weight.data = torch.renorm(self.weight.data, p=2, dim=0, maxnorm=self.max_norm)
        return super().forward(x)


class LinearWithConstraint(nn.Linear):
    def __init__(self, *args, max_norm=0.25, **kwargs):
        self.max_norm = max_norm
        super().__init__(*args, **kwargs)

    def forward(self, x):
        self.weight.data = torch.renorm(self.weight.data, p=2, dim=0, maxnorm=self.max_norm)
        return super().forward(x)


model = nn.Sequential(
    Conv2dWithConstraint(1, 8, (1, 64), max_norm=2.0, bias=False),
    nn.Flatten(),
    LinearWithConstraint(8 * 22 * 65, 4),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(16, 1, 22, 128), torch.randint(0, 4, (16,))
loss = nn.functional.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
