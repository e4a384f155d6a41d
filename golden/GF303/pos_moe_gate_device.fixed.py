# GF303 positive (davidmrau/mixture-of-experts #12): the gates are wrapped, then
# moved, so `w_gate` and `w_noise` are plain tensors: not registered, never
# trained. On CPU `.to("cpu")` returns the Parameter itself and hides the bug;
# the verifier forces the copy (as on a GPU) and counts the parameters.
import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyTopKGate(nn.Module):
    def __init__(self, input_size=16, num_experts=4, device="cpu"):
        super().__init__()
        self.w_gate = nn.Parameter(torch.zeros(input_size, num_experts).to(device))
        self.w_noise = nn.Parameter(torch.zeros(input_size, num_experts).to(device))

    def forward(self, x):
        clean = x @ self.w_gate
        noise_std = F.softplus(x @ self.w_noise) + 1e-2
        return torch.softmax(clean + noise_std, dim=-1)
