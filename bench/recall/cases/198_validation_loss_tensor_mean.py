"""Source: https://github.com/zoogzog/chexnet/issues/12
Title: Memory error while training
What went wrong: the validation pass runs the model without `torch.no_grad()` (its old
`volatile=True` variables no longer disable autograd) and adds each batch's loss tensor into a
running mean with `+=`, so the graphs of the whole validation epoch stay alive until it ends and
memory runs out at the end of the first epoch.
runs: validates; `loss_tensor_mean` carries a grad_fn chaining every batch's graph (the run prints it)
scope: extension
"""
import torch
import torch.nn as nn


def epoch_val(model, data_loader, loss):
    model.eval()
    loss_val = 0
    loss_val_norm = 0
    loss_tensor_mean = 0
    for inputs, targets in data_loader:
        output = model(inputs)
        loss_tensor = loss(output, targets)
        loss_tensor_mean += loss_tensor  # expect: GF208
        loss_val += loss_tensor.item()
        loss_val_norm += 1
    return loss_val / loss_val_norm, loss_tensor_mean / loss_val_norm


model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 14), nn.Sigmoid())
loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4, 14)).float()) for _ in range(3)]
val_loss, mean_tensor = epoch_val(model, loader, nn.BCELoss())
print(val_loss, mean_tensor.grad_fn)
