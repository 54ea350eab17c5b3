"""The models the engine benches time in both libraries, built from a library's `nn` (torch.nn
or engine.nn): bench/engine.py on the CPU, bench/cuda.py on a GPU."""


def lenet(nn):
    """LeNet-5 on 1x28x28: conv(1,6,5,pad 2)-relu-pool, conv(6,16,5)-relu-pool, 400-120-84-10."""
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
    )  # fmt: skip
