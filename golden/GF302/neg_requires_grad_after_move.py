# GF302 negative: the correct forms. Created on the device, or moved first and
# then marked as a leaf that requires grad.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
a = torch.randn(3, 4, device=device, requires_grad=True)
b = torch.randn(3, 4).cuda().requires_grad_()
c = torch.randn(3, 4).to(device).requires_grad_(True)
d = torch.zeros(4, dtype=torch.float64, requires_grad=True)
