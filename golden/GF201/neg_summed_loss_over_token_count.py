# GF201 negative: each loss below is summed over its elements, so dividing it
# by a literal token or batch count makes it a mean, not a loss scale.
# Removing `/ 4096` would multiply every gradient by 4096 and the run diverges.
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 50
model = nn.Sequential(nn.Embedding(VOCAB, 32), nn.Linear(32, VOCAB))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
summed_ce = nn.CrossEntropyLoss(reduction="sum")
legacy_nll = nn.NLLLoss(size_average=False)
reduction = "sum"
batches = [torch.randint(0, VOCAB, (64, 65)) for _ in range(10)]

for epoch in range(3):
    for tokens in batches:
        inputs, labels = tokens[:, :-1], tokens[:, 1:]
        logits = model(inputs).reshape(-1, VOCAB)
        # functional loss summed by keyword
        loss = F.cross_entropy(logits, labels.reshape(-1), reduction="sum") / 4096
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        # a criterion built to sum, divided in place
        loss = summed_ce(model(inputs).reshape(-1, VOCAB), labels.reshape(-1))
        loss /= 4096
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        # per-token losses masked and summed, then a mean over the fixed token count
        per_token = F.cross_entropy(model(inputs).reshape(-1, VOCAB), labels.reshape(-1), reduction="none")
        mask = (labels.reshape(-1) != 0).float()
        masked_sum = (per_token * mask).sum()
        mean_loss = masked_sum / 4096
        mean_loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        # the legacy size_average=False form, scaled by a reciprocal literal
        log_probs = F.log_softmax(model(inputs).reshape(-1, VOCAB), dim=-1)
        (legacy_nll(log_probs, labels.reshape(-1)) * 0.000244140625).backward()
        optimizer.step()
        optimizer.zero_grad()

        # the reduction held in a name, divided by the token count of this batch
        num_tokens = labels.numel()
        loss = F.cross_entropy(model(inputs).reshape(-1, VOCAB), labels.reshape(-1), reduction=reduction) / num_tokens
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        # a sum over the batch divided by the batch size
        sq = ((model(inputs)[:, 0] - 1.0) ** 2).sum() / inputs.size(0)
        sq.backward()
        optimizer.step()
        optimizer.zero_grad()
