# GF305 negative: `forward` methods of things that are not nn.Modules (a
# pipeline object, a solver), where calling the object would be wrong.
class Pipeline:
    def forward(self, batch):
        return [s * 2 for s in batch]


pipeline = Pipeline()
result = pipeline.forward([1, 2, 3])


def run(solver, state):
    return solver.forward(state)
