"""Source: https://github.com/pomonam/kronfluence/issues/35
Title: AMP warning
What went wrong: the library builds `torch.cuda.amp.GradScaler` (deprecated) whenever a
float16 computation is configured, so every run prints the FutureWarning.
runs: emits FutureWarning (`torch.cuda.amp.GradScaler(args...)` is deprecated); without CUDA the scaler disables itself with a warning
scope: documented
"""
import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler


def fit_covariances(model, batches, amp_dtype=torch.float16):
    enable_amp = amp_dtype == torch.float16
    scaler = GradScaler(init_scale=2.0**16, enabled=enable_amp)  # expect: GF301
    stats = torch.zeros(())
    for x, y in batches:
        model.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y, reduction="sum")
        scaler.scale(loss).backward()
        stats += sum(p.grad.pow(2).sum() for p in model.parameters()) / scaler.get_scale()
    return stats


if __name__ == "__main__":
    print(fit_covariances(nn.Linear(5, 1), [(torch.randn(3, 5), torch.randn(3, 1))]))
