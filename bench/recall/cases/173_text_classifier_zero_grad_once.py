"""Source: https://github.com/FreedomIntelligence/TextClassificationBenchmark/issues/20
Title: why donot use optimizer.zero_grad in each training step?
What went wrong: the training script clears the gradients once, before the batch loop, and the
loop then runs backward(), a gradient clip and step() on every batch without clearing again,
so each step uses the running sum of all batch gradients.
runs: trains; gradients accumulate over the whole epoch
scope: documented
"""
import torch
import torch.nn as nn


class LSTMClassifier(nn.Module):
    def __init__(self, vocab=60, dim=12, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens):
        hidden, _ = self.rnn(self.emb(tokens))
        return torch.log_softmax(self.out(hidden[:, -1]), dim=-1)


model = LSTMClassifier()
model.train()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
optimizer.zero_grad()
loss_fun = nn.NLLLoss()
batches = [(torch.randint(0, 60, (4, 7)), torch.randint(0, 3, (4,))) for _ in range(5)]
for index, (text, label) in enumerate(batches):
    loss = loss_fun(model(text), label)
    loss.backward()  # expect: GF205
    nn.utils.clip_grad_value_(model.parameters(), 1.0)
    optimizer.step()
    print("loss : %.5f" % loss.item())
