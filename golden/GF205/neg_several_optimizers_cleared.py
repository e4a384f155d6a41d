# GF205 negative: several optimizers, each cleared in a way the rule accepts or
# cannot rule out: both cleared; a model's own zero_grad(); two optimizers over
# parts of one model (clearing one may clear the other's parameters); a clear
# skipped on purpose in an accumulation branch, or under an `if` without `else`;
# a train-step function whose caller clears the gradients itself; and a branch
# without the clear that skips the batch (`continue`).
import torch
import torch.nn as nn

enc = nn.Linear(8, 8)
dec = nn.Linear(8, 8)
opt_enc = torch.optim.Adam(enc.parameters())
opt_dec = torch.optim.Adam(dec.parameters())
whole = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))
opt_all = torch.optim.SGD(whole.parameters(), lr=0.1)
opt_last = torch.optim.SGD(whole[1].parameters(), lr=0.1)
batches = [torch.randn(4, 8) for _ in range(6)]

for x in batches:
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    dec(enc(x)).pow(2).mean().backward()
    opt_enc.step()
    opt_dec.step()

for x in batches:
    dec.zero_grad()
    enc(x).pow(2).mean().backward()
    opt_enc.step()
    opt_enc.zero_grad()
    dec(x).pow(2).mean().backward()
    opt_dec.step()

for x in batches:
    opt_all.zero_grad()
    whole(x).pow(2).mean().backward()
    opt_last.step()
    opt_all.step()

for i, x in enumerate(batches):
    if i % 2 == 0:
        pass
    else:
        opt_enc.zero_grad()
    enc(x).pow(2).mean().backward()
    opt_enc.step()

for x in batches:
    if x.abs().max() < 10:
        opt_enc.zero_grad()
    enc(x).pow(2).mean().backward()
    opt_enc.step()


def step_once(model, opt, x, fresh):
    if fresh:
        opt.zero_grad()
    else:
        x = x * 0.5
    model(x).pow(2).mean().backward()
    opt.step()


for x in batches:
    opt_dec.zero_grad()
    step_once(dec, opt_dec, x, fresh=False)


for x in batches:
    if not torch.isfinite(x).all():
        continue
    else:
        opt_enc.zero_grad()
    enc(x).pow(2).mean().backward()
    opt_enc.step()
