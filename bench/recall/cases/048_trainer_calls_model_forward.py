"""Source: https://github.com/allenai/allennlp/issues/456
Title: Use model(**inputs) rather than model.forward(**inputs)
What went wrong: the trainer runs the model through `self._model.forward(**batch)`, which skips
nn.Module.__call__ and therefore any registered forward/backward hooks.
runs: trains but hooks registered on the model never fire
scope: documented
"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(10, 2)

    def forward(self, tokens, label):
        logits = self.proj(tokens)
        return {"logits": logits, "loss": nn.functional.cross_entropy(logits, label)}


class Trainer:
    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer

    def _batch_loss(self, batch):
        output_dict = self._model.forward(**batch)  # expect: GF305
        return output_dict["loss"]

    def train_epoch(self, batches):
        self._model.train()
        for batch in batches:
            self._optimizer.zero_grad()
            loss = self._batch_loss(batch)
            loss.backward()
            self._optimizer.step()


model = Classifier()
model.register_forward_hook(lambda m, i, o: print("hook"))
Trainer(model, torch.optim.Adam(model.parameters())).train_epoch(
    [{"tokens": torch.randn(4, 10), "label": torch.randint(0, 2, (4,))}]
)
