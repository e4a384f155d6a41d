"""Source: https://github.com/RupertLuo/Valley/issues/13
Title: Gradient issue
What went wrong: the video-language model runs its multimodal projector (`mm_projector`) inside
`torch.no_grad()` in every call path, while the optimizer is built from all of the model's
parameters and the training configuration is meant to tune the projector; no gradient ever reaches
it, so the projector is not trained at all.
runs: trains; the projector's weight .grad stays None after backward (the run prints it)
scope: documented
"""
import torch
import torch.nn as nn


class VideoLanguageModel(nn.Module):
    def __init__(self, vis_dim=12, txt_dim=16, vocab=30):
        super().__init__()
        self.vision_tower = nn.Linear(20, vis_dim)
        self.mm_projector = nn.Linear(vis_dim, txt_dim)
        self.embed = nn.Embedding(vocab, txt_dim)
        self.lm_head = nn.Linear(txt_dim, vocab)

    def encode_frames(self, frames):
        feats = self.vision_tower(frames).mean(dim=1)
        with torch.no_grad():
            tokens = self.mm_projector(feats)  # expect: GF212
        return tokens

    def forward(self, frames, input_ids):
        h = torch.cat([self.encode_frames(frames).unsqueeze(1), self.embed(input_ids)], dim=1)
        return self.lm_head(h)


model = VideoLanguageModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
frames, ids = torch.randn(2, 4, 20), torch.randint(0, 30, (2, 5))
logits = model(frames, ids)
loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 30), ids.reshape(-1))
loss.backward()
optimizer.step()
print(model.mm_projector.weight.grad)
