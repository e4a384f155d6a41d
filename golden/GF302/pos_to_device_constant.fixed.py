# GF302 positive inside a function: `.to(DEVICE)` with the module-level device
# constant. On a CPU machine it returns the leaf itself, which is why this only
# breaks on a GPU; the verifier forces the copy and says so.
import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def init_params(n_in, n_out):
    weight = torch.randn(n_in, n_out, device=DEVICE, requires_grad=True)
    bias = torch.zeros(n_out, device=DEVICE, requires_grad=True)
    return weight, bias
