"""gradfix: find PyTorch training hazards and rewrite them, proving each rewrite."""

__version__ = "0.1.0"


def __getattr__(name):
    # `gradfix.probe()` without importing torch at `import gradfix`: the subpackage is callable and loads torch
    # only when a probe starts
    if name == "probe":
        import importlib

        return importlib.import_module("gradfix.probe")
    raise AttributeError(f"module 'gradfix' has no attribute {name!r}")
