# GF101 negative: linear probe on a frozen CLIP backbone. The features are
# produced under no_grad and normalised in place *after* the block: they do
# not require grad, so no op saved them. Only the probe is trained.
import torch
import torch.nn.functional as F


def train_linear_probe(clip_model, probe, loader, opt, epochs=10):
    clip_model.eval()
    for epoch in range(epochs):
        for images, labels in loader:
            with torch.no_grad():
                feats = clip_model.encode_image(images).float()
            feats /= feats.norm(dim=-1, keepdim=True)
            logits = probe(feats)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return probe
