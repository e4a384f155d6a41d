"""Healthy: a tiny transformer encoder language-model step with a warm-up LambdaLR stepped per batch (a
per-iteration schedule) and AdamW."""
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, dim = 40, 16
emb = nn.Embedding(vocab, dim)
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.1, batch_first=True), 1)
lm_head = nn.Linear(dim, vocab)
params = [*emb.parameters(), *enc.parameters(), *lm_head.parameters()]
opt = torch.optim.AdamW(params, lr=1e-3)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4))
for step in range(6):
    tokens = torch.randint(0, vocab, (4, 10))
    logits = lm_head(enc(emb(tokens[:, :-1])))
    loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
