"""Source: https://github.com/yastrebksv/TennisCourtDetector/issues/7
Title: Why there is no "optimizer.zero_grad()" in base_trainer.py?
What went wrong: the train function runs forward, backward and step for each batch but never
clears the gradients.
runs: trains but each step uses the sum of all previous batches' gradients
scope: documented
"""
import torch
import torch.nn as nn


def train(model, train_loader, optimizer, device="cpu"):
    model.train()
    criterion = nn.MSELoss()
    losses = []
    for iter_id, batch in enumerate(train_loader):
        out = model(batch[0].float().to(device))
        gt_hm = batch[1].float().to(device)
        loss = criterion(torch.sigmoid(out), gt_hm)
        loss.backward()  # expect: GF205
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)


if __name__ == "__main__":
    net = nn.Conv2d(3, 15, 3, padding=1)
    opt = torch.optim.Adam(net.parameters(), lr=1e-5)
    loader = [(torch.rand(2, 3, 32, 32), torch.rand(2, 15, 32, 32)) for _ in range(4)]
    train(net, loader, opt)
