# GF307 negative: only the synthesis half of a codec is stepped here; the second pass goes through a method of
# the codec object (`render`) that runs that half on a detached code. The detaches stop gradient at the frozen
# analysis half and at the target; the term still trains `codec.synthesis` through `render`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Codec(nn.Module):
    def __init__(self, width=8, code=3):
        super().__init__()
        self.analysis = nn.Linear(width, code)
        self.synthesis = nn.Linear(code, width)

    def render(self, code):
        return torch.tanh(self.synthesis(code))

    def forward(self, signal):
        return self.render(self.analysis(signal))


codec = Codec()
synth_opt = torch.optim.Adam(codec.synthesis.parameters(), lr=1e-3)
for step in range(4):
    signal = torch.randn(6, 8)
    first = codec.synthesis(codec.analysis(signal).detach())
    replay = codec.render(codec.analysis(first).detach())
    loss = F.mse_loss(first, signal) + 0.5 * F.mse_loss(replay, first.detach())
    synth_opt.zero_grad()
    loss.backward()
    synth_opt.step()
