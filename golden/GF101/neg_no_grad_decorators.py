# GF101 negative: evaluation helpers decorated with @torch.no_grad() and
# @torch.inference_mode(); in-place post-processing there is safe, even on
# outputs of norm / softmax.
import torch
import torch.nn.functional as F


@torch.no_grad()
def embed_gallery(model, images):
    emb = model(images)
    emb /= emb.norm(dim=1, keepdim=True)
    return emb


@torch.inference_mode()
def predict_probs(model, x, temperature=2.0):
    logits = model(x)
    logits /= temperature
    probs = F.softmax(logits, dim=1)
    probs.clamp_(min=1e-6)
    return probs


def retrieve(model, queries, gallery_images, k=5):
    gallery = embed_gallery(model, gallery_images)
    with torch.inference_mode():
        q = model(queries)
        q /= q.norm(dim=1, keepdim=True)
    return (q @ gallery.T).topk(k, dim=1).indices
