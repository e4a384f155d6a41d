# GF307 positive: `codec.embed` reads only the frozen analysis half, and the synthesis output is detached before
# it goes in, so the consistency term carries no gradient to `codec.synthesis`, the half being stepped.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Codec(nn.Module):
    def __init__(self, width=8, code=3):
        super().__init__()
        self.analysis = nn.Linear(width, code)
        self.synthesis = nn.Linear(code, width)

    def embed(self, signal):
        return F.normalize(self.analysis(signal), dim=-1)


codec = Codec()
synth_opt = torch.optim.Adam(codec.synthesis.parameters(), lr=1e-3)
for step in range(4):
    signal = torch.randn(6, 8)
    code = codec.analysis(signal).detach()
    out = codec.synthesis(code)
    consistency = (codec.embed(out.detach()) - F.normalize(code, dim=-1)).pow(2).mean()
    loss = F.mse_loss(out, signal) + 0.2 * consistency
    synth_opt.zero_grad()
    loss.backward()
    synth_opt.step()
