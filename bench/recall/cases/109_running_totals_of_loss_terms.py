"""Source: https://github.com/samuelyu2002/ImVisible/issues/2
Title: Expected input[32, 768, 3, 576] to have 3 channels, but got 768 channels instead.
What went wrong: besides the shape error, the training loop sums the total loss and both of
its terms (an MSE and a cross-entropy) into running totals as tensors; the computation graphs
were stored and took up large amounts of RAM. The fix: `.item()` on all three.
runs: trains; the three running totals keep the graph of every batch
scope: documented
"""
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(24, 32)
        self.reg = nn.Linear(32, 2)
        self.cls = nn.Linear(32, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.reg(h), self.cls(h)


def main(epochs=2):
    model = TwoHeads()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    mse_fn, ce_fn = nn.MSELoss(), nn.CrossEntropyLoss()
    data = [(torch.randn(8, 24), torch.randn(8, 2), torch.randint(0, 3, (8,))) for _ in range(4)]
    for epoch in range(epochs):
        running_loss = running_loss_mse = running_loss_ce = 0.0
        for x, point, mode in data:
            optimizer.zero_grad()
            pred_point, pred_mode = model(x)
            mse = mse_fn(pred_point, point)
            cross_entropy = ce_fn(pred_mode, mode)
            loss = mse + cross_entropy
            loss.backward()
            optimizer.step()
            running_loss += loss  # expect: GF208
            running_loss_mse += mse  # expect: GF208
            running_loss_ce += cross_entropy  # expect: GF208
        print(epoch, running_loss / len(data), running_loss_mse, running_loss_ce)


if __name__ == "__main__":
    main()
