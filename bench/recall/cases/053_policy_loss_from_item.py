"""Source: https://github.com/isayev/ReLeaSE/issues/39
Title: Weights are not updating
What went wrong: to dodge a CUDA-to-numpy error the reporter rewrote the policy-gradient term
as `log_probs[0, top_i].item() * discounted_reward`, turning the RL loss into a constant; every
layer's grad came back None. (The re-wrap before backward is how such code reaches backward
without an error; the report itself only says all grads are None.)
runs: trains but every generator gradient is None
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

generator = nn.GRU(16, 32, batch_first=True)
decoder = nn.Linear(32, 45)
params = list(generator.parameters()) + list(decoder.parameters())
optimizer = torch.optim.Adam(params, lr=1e-4)
gamma, n_batch = 0.97, 2

for _ in range(n_batch):
    optimizer.zero_grad()
    rl_loss = 0
    discounted_reward = 1.0
    out, _ = generator(torch.randn(1, 10, 16))
    log_probs = F.log_softmax(decoder(out[:, -1]), dim=1)
    top_i = int(torch.argmax(log_probs))
    rl_loss -= log_probs[0, top_i].item() * discounted_reward  # expect: GF307
    discounted_reward *= gamma
    rl_loss = torch.tensor(rl_loss / n_batch, requires_grad=True)
    rl_loss.backward()
    optimizer.step()
print([p.grad for p in params][:1])
