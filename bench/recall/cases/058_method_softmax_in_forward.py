"""Source: https://github.com/lansinuote/Huggingface_Toturials/issues/6
Title: Softmax applied before CrossEntropyLoss (分类示例在 CrossEntropyLoss 前重复应用了 Softmax)
What went wrong: the classification examples end Model.forward() with
`out = out.softmax(dim=1)` and train it with torch.nn.CrossEntropyLoss.
runs: trains but the loss is computed on probabilities instead of logits
scope: documented
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(100, 32)
        self.fc = nn.Linear(32, 2)

    def forward(self, input_ids):
        hidden = self.encoder(input_ids)
        out = self.fc(hidden[:, 0])
        out = out.softmax(dim=1)
        return out


model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
criterion = torch.nn.CrossEntropyLoss()
for i in range(3):
    input_ids, labels = torch.randint(0, 100, (8, 12)), torch.randint(0, 2, (8,))
    out = model(input_ids)
    loss = criterion(out, labels)  # expect: GF308
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
