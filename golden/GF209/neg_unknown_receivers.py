# GF209 negative: receivers of unknown type (a batch from a loader, an
# attribute of a config) are not assumed to be tensors.
def process(loader, cfg):
    for item in loader:
        item.clamp(0, 1)
    cfg.values.add(3)
    cfg.scale.mul(2)
