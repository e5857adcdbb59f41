"""torchvision classics with random weights at 64x64: residual, mobile, compound-scaled, ConvNeXt, shifted-window
and plain vision transformers (`nn.MultiheadAttention`), dense connections and a segmentation head."""
from __future__ import annotations

import torch
from torch.export import Dim

from tests.zoo.entry import Recipe, ZooEntry
from tests.zoo.torchvision_shim import import_torchvision


def _image(batch: int = 1) -> torch.Tensor:
    return torch.randn(batch, 3, 64, 64)


def resnet18() -> Recipe:
    """Unbounded batch: `Dim("batch")` has no upper end."""
    model = import_torchvision().models.resnet18(weights=None, num_classes=10)
    return Recipe(model.eval(), (_image(2),), dynamic_shapes=({0: Dim("batch")},))


def mobilenet_v3_small() -> Recipe:
    return Recipe(import_torchvision().models.mobilenet_v3_small(weights=None, num_classes=10).eval(), (_image(),))


def efficientnet_b0() -> Recipe:
    return Recipe(import_torchvision().models.efficientnet_b0(weights=None, num_classes=10).eval(), (_image(),))


def convnext_tiny() -> Recipe:
    return Recipe(import_torchvision().models.convnext_tiny(weights=None, num_classes=10).eval(), (_image(),))


def swin_t() -> Recipe:
    return Recipe(import_torchvision().models.swin_t(weights=None, num_classes=10).eval(), (_image(),))


def vit() -> Recipe:
    """ViT-B/16's depth (12 layers) at a small width; attention is `nn.MultiheadAttention`."""
    tv = import_torchvision()
    model = tv.models.VisionTransformer(image_size=64, patch_size=16, num_layers=12, num_heads=4, hidden_dim=64,
                                        mlp_dim=128, num_classes=10)
    return Recipe(model.eval(), (_image(),))


def densenet121() -> Recipe:
    return Recipe(import_torchvision().models.densenet121(weights=None, num_classes=10).eval(), (_image(),))


def deeplabv3() -> Recipe:
    """Segmentation: a MobileNetV3 backbone, an ASPP head, and a dict output."""
    seg = import_torchvision().models.segmentation
    model = seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4)
    return Recipe(model.eval(), (_image(),))


ENTRIES = [
    ZooEntry("resnet18", "torchvision", resnet18, "unbounded batch"),
    ZooEntry("mobilenet_v3_small", "torchvision", mobilenet_v3_small),
    ZooEntry("efficientnet_b0", "torchvision", efficientnet_b0),
    ZooEntry("convnext_tiny", "torchvision", convnext_tiny),
    ZooEntry("swin_t", "torchvision", swin_t),
    ZooEntry("vit", "torchvision", vit, "nn.MultiheadAttention"),
    ZooEntry("densenet121", "torchvision", densenet121),
    ZooEntry("deeplabv3", "torchvision", deeplabv3, "segmentation, dict output"),
]
