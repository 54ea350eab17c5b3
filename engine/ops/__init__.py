"""The ops: each module pairs forwards with their backward nodes (see engine/_methods.py for
how they become Tensor methods)."""
