"""Source: https://github.com/huggingface/torchMoji/issues/21
Title: loss don't go down when finetune and about requires_grad option in backward()
What went wrong: the model returned `outputs.data` when asked for tensors, so the loss had no
grad_fn; users added `loss = Variable(loss, requires_grad=True)` to silence the error and the
loss never moved (removing the `.data` line fixed it).
runs: trains but the validation loss is identical every epoch
scope: extension (the `.data` read is in the model's forward, the loss is re-wrapped)
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class TorchMoji(nn.Module):
    def __init__(self, nb_classes=2, return_tensor=True):
        super().__init__()
        self.embed = nn.Embedding(500, 32)
        self.lstm = nn.LSTM(32, 32, batch_first=True)
        self.output_layer = nn.Linear(32, nb_classes)
        self.return_tensor = return_tensor

    def forward(self, input_seqs):
        h, _ = self.lstm(self.embed(input_seqs))
        outputs = torch.sigmoid(self.output_layer(h[:, -1]))
        if self.return_tensor:
            outputs = outputs.data  # expect: GF104
        return outputs


model = TorchMoji()
loss_op = nn.BCELoss()
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
for epoch in range(3):
    X, y = torch.randint(0, 500, (8, 10)), torch.randint(0, 2, (8, 2)).float()
    optimizer.zero_grad()
    loss = loss_op(model(X), y)
    loss = Variable(loss, requires_grad=True)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
