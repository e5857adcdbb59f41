"""The custom decomposition table from the torch.export tutorial (IR/Decompositions): conv2d becomes 2 * convolution."""
import torch

decomp_table = torch.export.default_decompositions()


def my_awesome_custom_conv2d_function(x, weight, bias, stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1):
    return 2 * torch.ops.aten.convolution(x, weight, bias, stride, padding, dilation, False, [0, 0], groups)


decomp_table[torch.ops.aten.conv2d.default] = my_awesome_custom_conv2d_function
