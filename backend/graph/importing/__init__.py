"""The parts of code import (`backend/graph/importing/importer.py` is the entry point and walks the
statements): each module reads one kind of line or expression into nodes.

    problems.py      ImportProblem / ImportFailed (what the user sees), Unsupported (one line)
    syntax.py        plain `ast` helpers: literals, dotted names, comments, output-only lines
    modules.py       the script's imports, and what a dotted call name means under them
    nodes.py         the nodes and edges read so far, their ids, the finished document
    sources.py       eg.tensor / zeros / ones / randn / rand / arange, numpy's default_rng
    dataset_lines.py `X, y = circle(...)` and the dataset / labels nodes made from X and y
    layers.py        nn.Linear declarations, their calls, weights copied under no_grad
    expressions.py   operators, comparisons, numbers as operands
    calls.py         calls of the op registry's functions and methods
    branches.py      `if` blocks as `if` nodes
    loops.py         `for i in range(...)` loops, unrolled
    nn_layers.py     nn.ReLU() / nn.MSELoss() / nn.Sequential(...) / layer classes, and calls
    classes.py       nn.Module classes as module definitions, their instances as module nodes
    constants.py     the constants the script and its classes work out; `if` on them
    module_lists.py  nn.ModuleList elements, and the lists nn.Sequential / comprehensions stand for;
                     a Python list of modules, made where nn.Sequential(*layers) takes it
    shared_calls.py  an instance called more than once: its parameters shared by the calls
    skipped.py       lines that touch no tensor (print, manual_seed, assert): skipped, noted
    first_step.py    a training loop computing its loss inside: its first step is the graph
    functions.py     the script's functions, defs inside them and a class's extra methods,
                     inlined where called
    pure_functions.py a function's call on constants worked out (to_2tuple = _ntuple(2): a closure)
    shapes.py        x.size(0), x.shape[-1], B, T, C = x.size(): their numbers at read time
    unpacking.py     a, b = b, a; mu, logvar = self.encode(x); q, k, v = t.split(n, dim=2)
    python_values.py math on numbers, @dataclass / plain config classes and their instances
    tensor_lists.py  outs.append(h); torch.cat(outs); [h(x) for h in self.heads]
    module_modes.py  model.eval() / model.train() on a class instance: a definition variant
    random_draws.py  torch.randn / rand with a generator or after manual_seed: PyTorch's values
    attention_init.py MultiheadAttention seeded in the node's order (the seed, then its init)
    layout_block.py  the exported script's layout block: ids, places, labels by statement

    inplace_lines.py x.add_(1), x[0] = v, x += 1: in-place nodes, and views read as x[0:2]
    tensor_index.py  C[ids], x[range(n), target], x[:, idx], x[mask]: the index op
    leaf_values.py   w = <computed>; w.requires_grad_(): a tensor node of its values
    no_grad_lines.py with torch.no_grad(): y = <expr>: its reads detached
    weights_file.py  state_dict = load_file(...) and state_dict["conv1.weight"]: the exported
                     script's .safetensors file, given with it (its header checked first)
"""
