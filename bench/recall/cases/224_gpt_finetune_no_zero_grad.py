"""Source: https://github.com/huggingface/transformers/issues/340
Title: optimizer.zero_grad() in run_openai_gpt.py?
What went wrong: the fine-tuning example's batch loop runs `loss.backward()` and
`optimizer.step()` but never clears the gradients between minibatches; the maintainer confirmed
the mistake and fixed it on master.
runs: trains; every update applies the sum of all gradients so far
scope: documented
"""
import torch
import torch.nn as nn

vocab, n_ctx = 50, 8
model = nn.Sequential(nn.Embedding(vocab, 24), nn.Linear(24, vocab))
optimizer = torch.optim.AdamW(model.parameters(), lr=6.25e-5)
train_dataloader = [torch.randint(0, vocab, (4, n_ctx)) for _ in range(6)]
num_train_epochs = 2
nb_tr_steps, tr_loss = 0, 0.0
model.train()
for _ in range(num_train_epochs):
    for input_ids in train_dataloader:
        logits = model(input_ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), input_ids[:, 1:].reshape(-1))
        loss.backward()  # expect: GF205
        optimizer.step()
        tr_loss += loss.item()
        nb_tr_steps += 1
print(tr_loss / nb_tr_steps)
