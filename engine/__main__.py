"""`python -m engine demo`: walk the teaching texts' first examples on the engine."""

import sys

import engine as eg


def demo():
    print("Wiregrad engine demo: PyTorch's autograd, step by step\n")
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x + 3 * x + 1
    y.backward()
    print(f"y = x*x + 3*x + 1 at x = 2:  y = {y}")
    print(f"  dy/dx = 2x + 3 = {x.grad}\n")

    x = eg.tensor(2.0, requires_grad=True)
    w = eg.tensor(3.0, requires_grad=True)
    z = (x + w) ** 2
    z.backward()
    print(f"z = (x + y) ** 2 at x = 2, y = 3:  z = {z}")
    print(f"  dz/dx = {x.grad}, dz/dy = {w.grad}")
    print(
        f"  graph: {z.grad_fn.name()} <- {z.grad_fn.next_functions[0][0].name()} <- "
        f"AccumulateGrad x {{x, y}}\n"
    )

    a = eg.tensor([2.0, 3.0], requires_grad=True)
    c = (a * 3).mean()
    c.backward()
    print(f"c = (a * 3).mean() for a = {a.detach()}:  c = {c}")
    print(f"  dc/da = {a.grad}  (3 / 2 for each element)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] == "demo":
        demo()
        return 0
    print(f"usage: wiregrad demo   (unknown command: {argv[0]})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
