"""Source: https://github.com/ThilinaRajapakse/simpletransformers/issues/941
Title: [Bug] When evaluate_during_training=True, after the evaluation and before the next epoch, the model is in eval mode
What went wrong: the model class's `train_model` method puts the network in training mode once,
before its epoch loop, and calls its own `eval_model` method at the end of each epoch; that
method switches the network to eval mode and never switches back, so every later epoch trains
with dropout off.
runs: trains; from the second epoch on `net.training` is False during the batch loop (the run prints it)
scope: extension
"""
import torch
import torch.nn as nn


class LanguageModelingModel:
    def __init__(self):
        self.model = nn.Sequential(nn.Embedding(40, 16), nn.Dropout(0.1), nn.Linear(16, 40))
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=5e-4)

    def eval_model(self, batches):
        self.model.eval()
        with torch.no_grad():
            return sum(nn.functional.cross_entropy(self.model(x).flatten(0, 1), x.flatten()).item() for x in batches)

    def train_model(self, train_batches, eval_batches, epochs=3, evaluate_during_training=True):
        self.model.train()
        for epoch in range(epochs):
            for x in train_batches:
                loss = nn.functional.cross_entropy(self.model(x).flatten(0, 1), x.flatten())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            print(epoch, self.model.training)
            if evaluate_during_training:
                self.eval_model(eval_batches)  # expect: GF211


batches = [torch.randint(0, 40, (2, 8)) for _ in range(3)]
LanguageModelingModel().train_model(batches, batches)
