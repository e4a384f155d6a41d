# GF101 positive: OWL-ViT class-head normalisation (transformers issue #24525).
# linalg.norm saves its input, so `/=` on the class embeddings breaks backward.
# The right side is a sum, so the rewrite must parenthesise it: the first fix
# in PR #24529 wrote `x / norm + 1e-6`, which review caught.
import torch
import torch.nn as nn


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, hidden_dim=768, query_dim=512):
        super().__init__()
        self.dense0 = nn.Linear(hidden_dim, query_dim)
        self.logit_shift = nn.Linear(hidden_dim, 1)
        self.logit_scale = nn.Linear(hidden_dim, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds):
        image_class_embeds = self.dense0(image_embeds)
        # Normalize image and text features
        image_class_embeds = image_class_embeds / (torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6)
        query_embeds = query_embeds / (torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6)
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.elu(self.logit_scale(image_embeds)) + 1
        return (pred_logits + logit_shift) * logit_scale
