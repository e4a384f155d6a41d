"""Source: https://github.com/vinsis/ternary-quantization/issues/4
Title: ValueError: can't optimize a non-leaf Tensor?
What went wrong: the per-layer scaling factors are built as
`torch.ones(2, requires_grad=True).to(device)` in a list comprehension, so on GPU each is a
non-leaf copy and the optimizer refuses them (fix: pass device= to torch.ones).
runs: on a CUDA machine raises ValueError (can't optimize a non-leaf Tensor)
scope: documented
"""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(16, 16), nn.Linear(16, 4)).to(device)
weights_to_be_quantized = [m.weight for m in model]
scaling_factors = [torch.ones(2, requires_grad=True).to(device) for _ in range(len(weights_to_be_quantized))]  # expect: GF302
optimizer = torch.optim.Adam(list(model.parameters()) + scaling_factors, lr=1e-3)

x, y = torch.randn(4, 16, device=device), torch.randint(0, 4, (4,), device=device)
optimizer.zero_grad()
nn.functional.cross_entropy(model(x) * scaling_factors[0][0], y).backward()
optimizer.step()
