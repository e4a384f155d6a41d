# GF209 negative: modules convert and move in place: `model.to(device)`,
# `.cuda()`, `.float()`, `.half()`, `.train()` as statements are correct.
import torch
import torch.nn as nn

device = torch.device("cuda")
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
model.to(device)
model.cuda()
model.float()
model.half()
model.train()
model.requires_grad_(False)
