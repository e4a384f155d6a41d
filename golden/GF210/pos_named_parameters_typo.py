# GF210 positive: the typo in a named_parameters() loop that freezes all but
# the classifier.
import torchvision


def build_model():
    model = torchvision.models.resnet18(weights=None)
    for name, param in model.named_parameters():
        if not name.startswith("fc."):
            param.require_grad = False
    return model
