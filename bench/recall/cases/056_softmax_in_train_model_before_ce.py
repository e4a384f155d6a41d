"""Source: https://github.com/sugi-chan/custom_bert_pipeline/issues/1
Title: Softmax before nn.CrossEntropyLoss()
What went wrong: the train_model loop applies softmax to the classifier logits and then passes
the probabilities to nn.CrossEntropyLoss.
runs: trains but with a doubly-softmaxed loss
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_model(model, criterion, optimizer, dataloader, num_epochs=2):
    for epoch in range(num_epochs):
        model.train()
        for inputs, sentiment in dataloader:
            optimizer.zero_grad()
            outputs = model(inputs)
            outputs = F.softmax(outputs, dim=1)
            loss = criterion(outputs, torch.max(sentiment.float(), 1)[1])  # expect: GF308
            loss.backward()
            optimizer.step()
    return model


clf = nn.Linear(768, 3)
data = [(torch.randn(4, 768), F.one_hot(torch.randint(0, 3, (4,)), 3)) for _ in range(3)]
train_model(clf, nn.CrossEntropyLoss(), torch.optim.Adam(clf.parameters(), lr=2e-5), data)
