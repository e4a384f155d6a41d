# GF101 negative: CLIP zero-shot classification. Everything runs under
# torch.no_grad(), so the in-place normalisations record nothing for backward.
import torch


def zero_shot_probs(model, images, text_tokens):
    with torch.no_grad():
        image_features = model.encode_image(images)
        text_features = model.encode_text(text_tokens)
        image_features /= image_features.norm(dim=-1, keepdim=True)
        text_features /= text_features.norm(dim=-1, keepdim=True)
        logits = 100.0 * image_features @ text_features.T
    return logits.softmax(dim=-1)


def zero_shot_accuracy(model, loader, text_tokens):
    correct, total = 0, 0
    for images, labels in loader:
        probs = zero_shot_probs(model, images, text_tokens)
        correct += (probs.argmax(dim=-1) == labels).sum().item()
        total += labels.numel()
    return correct / total
