"""Source: https://github.com/ai2cm/ace/pull/1493
Title: Make gradient checkpointing differentiable in the conditional SFNO
What went wrong: the conditional network checkpoints its input encoder with the reentrant
`torch.utils.checkpoint.checkpoint`, and the checkpointed input is the data; since no input
requires grad, the output has no `grad_fn` and the encoder's parameters silently stay at
`grad=None`, trained as a frozen random encoder (the fix passes `use_reentrant=False`).
runs: trains; warns "None of the inputs have requires_grad=True" and the encoder's gradients stay None (the run prints True)
scope: documented
"""
import torch
import torch.nn as nn
from torch.utils import checkpoint


class ConditionalNet(nn.Module):
    def __init__(self, channels=4, embed=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(channels, embed, 1), nn.GELU(), nn.Conv2d(embed, embed, 1))
        self.blocks = nn.Sequential(nn.Conv2d(embed, embed, 3, padding=1), nn.GELU())
        self.decoder = nn.Conv2d(embed, channels, 1)
        self.checkpointing = 1

    def forward(self, x):
        if self.checkpointing >= 1:
            h = checkpoint.checkpoint(self.encoder, x)  # expect: GF306
        else:
            h = self.encoder(x)
        return self.decoder(self.blocks(h) + h)


model = ConditionalNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(2, 4, 8, 8)
loss = (model(x) - x).pow(2).mean()
loss.backward()
optimizer.step()
print(model.encoder[0].weight.grad is None)
