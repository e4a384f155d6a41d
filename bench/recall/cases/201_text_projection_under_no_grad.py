"""Source: https://github.com/edreisMD/ConVIRT-pytorch/issues/7
Title: Text encoder in 'no_grad' block?
What went wrong: the contrastive image-text model's text branch runs its projection head (two
Linear layers after the pooled sentence embedding) inside `torch.no_grad()`, although the
optimizer holds all of the model's parameters; the text projection never receives a gradient,
and neither do the text encoder layers below it.
runs: trains; the text projection's weights have no gradient after backward (the run prints None)
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelCLR(nn.Module):
    def __init__(self, dim=16, out_dim=8):
        super().__init__()
        self.text_backbone = nn.Embedding(50, dim)
        self.text_l1 = nn.Linear(dim, dim)
        self.text_l2 = nn.Linear(dim, out_dim)
        self.image_backbone = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, dim))
        self.image_l1 = nn.Linear(dim, out_dim)

    def text_encoder(self, tokens):
        pooled = self.text_backbone(tokens).mean(dim=1)
        with torch.no_grad():
            x = F.relu(self.text_l1(pooled))  # expect: GF212
            out = self.text_l2(x)
        return out

    def forward(self, images, tokens):
        return self.image_l1(self.image_backbone(images)), self.text_encoder(tokens)


model = ModelCLR()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
zis, zls = model(torch.randn(4, 3, 8, 8), torch.randint(0, 50, (4, 6)))
logits = F.normalize(zis, dim=1) @ F.normalize(zls, dim=1).t()
loss = F.cross_entropy(logits / 0.1, torch.arange(4))
loss.backward()
optimizer.step()
print(model.text_l1.weight.grad)
