"""What every loss shares: the reduction (and PyTorch's deprecated size_average/reduce flags),
the check that input and target have one size, and how PyTorch names sizes and dtypes in its
messages."""

import warnings

REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_reduction(size_average, reduce, reduction, valid=REDUCTIONS):
    """The reduction, from PyTorch's deprecated size_average/reduce flags when either is given."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn(
            "size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            UserWarning,
            stacklevel=3,
        )
    if reduction not in valid:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def torch_size(shape):
    """A shape as PyTorch prints it in messages (torch.Size, not the engine's repr)."""
    return f"torch.Size({list(shape)})"


def check_same_size(input, target, stacklevel=3):
    if input._data.shape != target._data.shape:
        want, got = torch_size(target.shape), torch_size(input.shape)
        warnings.warn(
            f"Using a target size ({want}) that is different to the input size "
            f"({got}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=stacklevel,
        )


def type_name_of(t):
    return t.dtype.legacy_name[:-6]
