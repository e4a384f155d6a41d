# GF205 negative: a hand-written reset that replaces every `.grad` with a tensor of
# zeros, once in a file-level helper and once inline after the step. Nothing is
# carried into the next backward, so there is nothing to report.
import torch
import torch.nn as nn
from torch.autograd import Variable

encoder = nn.Linear(6, 3)
decoder = nn.Linear(3, 6)
weights = list(encoder.parameters()) + list(decoder.parameters())
solver = torch.optim.Adam(weights, lr=1e-3)


def wipe():
    for w in weights:
        if w.grad is not None:
            w.grad = torch.zeros_like(w.grad)


for step in range(50):
    batch = torch.rand(16, 6)
    recon = decoder(torch.relu(encoder(batch)))
    loss = ((recon - batch) ** 2).mean()
    loss.backward()
    solver.step()
    wipe()

for step in range(50):
    batch = torch.rand(16, 6)
    loss = ((decoder(encoder(batch)) - batch) ** 2).mean()
    loss.backward()
    solver.step()
    for w in weights:
        if w.grad is not None:
            old = w.grad.data
            w.grad = Variable(old.new().resize_as_(old).zero_())
