"""Source: https://github.com/SimonThomine/RememberingNormality/issues/7
Title: some questions
What went wrong: a memory module meant to learn its keys and values creates them in `__init__`
as plain random tensors moved to the device (`torch.randn(L, C).to(...)`), not as
`nn.Parameter`s, so they are not parameters of the model and stay at their random values.
runs: trains the projection only; `keys` and `values` never change (the author confirmed and fixed it)
scope: extension
notes: left (branch r13). A plain random tensor attribute read in `forward` like a weight is also how fixed random projections are written on purpose (random Fourier features, `self.B = torch.randn(d, k) * scale`, frozen random codebooks); nothing in the tree tells a meant-to-learn memory from a meant-to-stay-random one.
"""
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class MemoryModule(nn.Module):
    def __init__(self, slots=10, channel=8):
        super().__init__()
        self.proj = nn.Linear(channel, channel)
        self.keys = torch.randn(slots, channel).to(device)  # expect: GF304
        self.values = torch.randn(slots, channel).to(device)

    def forward(self, x):
        attn = torch.softmax(self.proj(x) @ self.keys.t(), dim=-1)
        return attn @ self.values


model = MemoryModule().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
before = model.keys.clone()
loss = model(torch.randn(4, 8, device=device)).pow(2).mean()
loss.backward()
optimizer.step()
print(torch.equal(before, model.keys), len(list(model.parameters())))
