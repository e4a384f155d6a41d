"""The project's own `CycleScheduler` (imported from the project) is handed to `train`: a scheduler parameter of
unknown class, next to a scheduler class of the project, is not taken for a torch scheduler."""
from myproject_sched import CycleScheduler


def train(model, loader, optimizer, scheduler):
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        if scheduler is not None:
            scheduler.step()
        optimizer.step()


def main(model, loader, optimizer):
    train(model, loader, optimizer, CycleScheduler(optimizer, 0.1, n_iter=100))
