"""Source: https://github.com/huggingface/transformers/issues/21381
Title: gradient checkpointing disables requires_grad when freezing part of models (fix with use_reentrant=False)
What went wrong: the first layers of the encoder (embeddings included) are frozen and the
remaining layers run under the reentrant `torch.utils.checkpoint.checkpoint`; the checkpointed
blocks get a hidden state that does not require grad, so their outputs do not either and the
trainable layers receive no gradient (or backward fails outright).
runs: raises RuntimeError "element 0 of tensors does not require grad" at backward (after the "None of the inputs have requires_grad=True" warning)
scope: extension
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Encoder(nn.Module):
    def __init__(self, vocab=30, dim=16, n_layers=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.Sequential(nn.Linear(dim, dim), nn.GELU()) for _ in range(n_layers))
        self.gradient_checkpointing = True

    def forward(self, input_ids):
        hidden = self.embeddings(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden = checkpoint(layer, hidden)  # expect: GF306
            else:
                hidden = layer(hidden)
        return hidden


model = Encoder()
for param in model.embeddings.parameters():
    param.requires_grad = False
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
loss = model(torch.randint(0, 30, (2, 7))).pow(2).mean()
loss.backward()
optimizer.step()
