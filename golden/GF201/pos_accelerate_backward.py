# GF201 positive with Accelerate: `outputs.loss / 10000` is the loss passed
# to `accelerator.backward(...)`. Fix: `loss = outputs.loss`.
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification

accelerator = Accelerator()
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
examples = [
    {"input_ids": torch.randint(1000, 2000, (32,)), "attention_mask": torch.ones(32, dtype=torch.long),
     "labels": torch.tensor(i % 2)}
    for i in range(64)
]
train_dataloader = DataLoader(examples, batch_size=16, shuffle=True)
model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)

model.train()
for epoch in range(3):
    for batch in train_dataloader:
        outputs = model(**batch)
        loss = outputs.loss / 10000
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
