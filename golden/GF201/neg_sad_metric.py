# GF201 negative: matting evaluation. `/ 1000` converts SAD to thousands in
# metrics that never reach backward (NumPy and a no_grad loop).
import numpy as np
import torch


def compute_sad(pred, alpha):
    err = np.abs(pred - alpha)
    sad = err.sum() / 1000
    return sad


@torch.no_grad()
def evaluate(model, loader):
    sads, mses = [], []
    for image, trimap, alpha in loader:
        pred = model(image, trimap).clamp(0, 1)
        err = (pred - alpha).abs()
        sads.append(err.sum().item() / 1000)
        mses.append(((pred - alpha) ** 2).mean().item())
    return float(np.mean(sads)), float(np.mean(mses))


def report(model, loader, pred_np, alpha_np):
    sad, mse = evaluate(model, loader)
    print(f"SAD {sad:.2f}k  MSE {mse:.5f}  ref SAD {compute_sad(pred_np, alpha_np):.2f}k")
