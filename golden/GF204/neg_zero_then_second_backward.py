# GF204 negative: the first backward only measures the auxiliary loss's
# gradient norm; zero_grad then clears it and the real loss is backpropagated
# before the step.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]
aux_norms = []

for x, y in loader:
    out = model(x)
    aux = out.pow(2).mean()
    aux.backward(retain_graph=True)
    aux_norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
    optimizer.zero_grad()
    loss = F.mse_loss(out, y)
    loss.backward()
    optimizer.step()
