# GF208 negative: the running totals are numpy arrays (`np.zeros(...)`), so nothing added to them
# can keep a graph: `array += tensor` on a tensor that requires grad raises TypeError instead of
# building one, and what a scoring method hands back here is itself an array of floats decoded
# from detached outputs. The scoring method reads the model output, which is why it looked like a
# loss term.
import numpy as np
import torch
import torch.nn as nn


class Tagger:
    def __init__(self, net, scorers, batches):
        self.net = net
        self.scorers = scorers
        self.batches = batches
        self.opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        self.crit = nn.CrossEntropyLoss()

    def _score(self, logits, gold):
        row = np.zeros(len(self.scorers))
        guess = logits.detach().cpu().numpy().argmax(-1)
        for k, scorer in enumerate(self.scorers):
            row[k] += scorer(guess, gold.numpy())
        return row

    def fit_epoch(self):
        running = 0.0
        board = np.zeros(len(self.scorers))
        for feats, gold in self.batches:
            self.opt.zero_grad()
            logits = self.net(feats)
            loss = self.crit(logits, gold)
            loss.backward()
            self.opt.step()
            running += loss.item()
            board += self._score(logits, gold)
        return running / len(self.batches), (board / len(self.batches)).tolist()


def hit_rate(guess, gold):
    return float((guess == gold).mean())


tagger = Tagger(nn.Linear(5, 3), [hit_rate], [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)])
print(tagger.fit_epoch())

# the same at module level, with the assignment form and a helper of the file that reads the output
def votes(logits, k):
    return np.bincount(logits.detach().argmax(1).numpy(), minlength=k)


net = nn.Linear(5, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
per_class = np.zeros(3)
for _ in range(3):
    feats, gold = torch.randn(4, 5), torch.randint(0, 3, (4,))
    opt.zero_grad()
    logits = net(feats)
    loss = nn.functional.cross_entropy(logits, gold)
    loss.backward()
    opt.step()
    per_class = per_class + votes(logits, 3)
print(per_class)
