# GF208 negative: the running sums are updated inside `with torch.no_grad():`,
# into tensors made with torch.zeros, so autograd records nothing and the sums
# never get a grad_fn.
import torch
import torch.nn as nn


def fit(model, batches, epochs=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = nn.MSELoss()
    for epoch in range(epochs):
        loss_sum = torch.zeros(1)
        count = 0
        for xb, yb in batches:
            opt.zero_grad()
            pred = model(xb)
            loss = crit(pred, yb)
            loss.backward()
            opt.step()
            with torch.no_grad():
                loss_sum += loss.float()
                count += xb.shape[0]
        print(epoch, (loss_sum / count).item())


fit(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(5)])
