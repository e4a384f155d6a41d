# GF101 negative: in-place ops that nothing saved and nothing aliases.
# A Linear output scaled in place (addmm does not save its output) and
# nn.ReLU(inplace=True) right after a conv: grads equal the out-of-place form.
import torch
import torch.nn as nn


class ConvHead(nn.Module):
    def __init__(self, in_ch=3, dim=32, n_out=10):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_ch, dim, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.fc = nn.Linear(dim, n_out)

    def forward(self, x):
        y = self.fc(self.body(x))
        y *= 0.5
        return y


model = ConvHead()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, target = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
loss = nn.functional.cross_entropy(model(x), target)
loss.backward()
opt.step()
