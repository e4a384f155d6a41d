# GF203 positive: the step closure nested in `run` calls a torch StepLR built by the
# enclosing function before the optimizer step: the first lr of the schedule is skipped.
import torch


def run(model, loader, epochs=10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1000)
    for epoch in range(epochs):
        for x, y in loader:
            def one_step():
                loss = torch.nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()

            one_step()
