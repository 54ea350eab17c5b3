"""Datasets for graphs that learn: the 2-D sets people know from TensorFlow Playground and
scikit-learn, made by numpy from a seed, scikit-learn's 8x8 handwritten digits (images), and
CSV text read into features and a target.

Every generator is a function `(n, noise, seed) -> (features float32 (n, 2), labels float32
(n,))` that uses nothing but numpy (`np`): code export copies the source of the one a graph uses
into the exported script, so the script makes the very same points. `from_csv` is
self-contained for the same reason. The points are shuffled (so that any batch mixes the
classes), lie roughly in [-1, 1] x [-1, 1], and `noise` is the standard deviation of gaussian
noise added to each coordinate (to the label, for `plane`). Classification sets label their
two classes 0 and 1.

`digits` is loaded through scikit-learn (the images ship inside that package, not in this
repository); it is self-contained like the generators, so an exported script calls
scikit-learn itself and gets the very same images.
"""

import functools

import numpy as np

MAX_CSV_BYTES = 1_000_000  # the editor sends the file's text inside the graph document
DEFAULT_MAX_ELEMENTS = 10_000_000


def circle(n, noise, seed):
    """Label 1 inside radius 0.5, label 0 on a ring from radius 0.7 to 1 (half the points each)."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) < n - n // 2).astype(np.float32)
    radius = np.where(labels == 1, rng.uniform(0.0, 0.5, n), rng.uniform(0.7, 1.0, n))
    angle = rng.uniform(0.0, 2 * np.pi, n)
    features = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    features += rng.normal(0.0, noise, (n, 2))
    order = rng.permutation(n)
    return features[order].astype(np.float32), labels[order]


def xor(n, noise, seed):
    """Uniform points, label 1 where both coordinates have the same sign (the quadrants of
    XOR); kept 0.05 off the axes, as TensorFlow Playground does, so the quadrants are clear."""
    rng = np.random.default_rng(seed)
    features = rng.uniform(0.05, 1.0, (n, 2)) * rng.choice([-1.0, 1.0], (n, 2))
    labels = (features[:, 0] * features[:, 1] > 0).astype(np.float32)
    features += rng.normal(0.0, noise, (n, 2))
    return features.astype(np.float32), labels


def gaussians(n, noise, seed):
    """Two round clouds of standard deviation 0.2: label 1 around (0.5, 0.5), label 0 around
    (-0.5, -0.5)."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) < n - n // 2).astype(np.float32)
    centres = np.where(labels[:, None] == 1, 0.5, -0.5)
    features = centres + rng.normal(0.0, 0.2, (n, 2)) + rng.normal(0.0, noise, (n, 2))
    order = rng.permutation(n)
    return features[order].astype(np.float32), labels[order]


def spiral(n, noise, seed):
    """Two interleaved spirals of 1.75 turns from the centre out to radius 1: at radius r a
    point sits at angle 3.5 pi r, and the spiral of label 0 is that of label 1 turned by pi."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) < n - n // 2).astype(np.float32)
    radius = rng.uniform(0.0, 1.0, n)
    angle = 3.5 * np.pi * radius + np.pi * (1 - labels)
    features = np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1)
    features += rng.normal(0.0, noise, (n, 2))
    order = rng.permutation(n)
    return features[order].astype(np.float32), labels[order]


def moons(n, noise, seed):
    """scikit-learn's two moons, centred: label 0 on the upper half of the unit circle around
    (-0.5, -0.25), label 1 on the lower half of the one around (0.5, 0.25)."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) >= n - n // 2).astype(np.float32)
    t = rng.uniform(0.0, np.pi, n)
    upper = np.stack([np.cos(t) - 0.5, np.sin(t) - 0.25], axis=1)
    lower = np.stack([0.5 - np.cos(t), 0.25 - np.sin(t)], axis=1)
    features = np.where(labels[:, None] == 1, lower, upper) + rng.normal(0.0, noise, (n, 2))
    order = rng.permutation(n)
    return features[order].astype(np.float32), labels[order]


def plane(n, noise, seed):
    """Regression: uniform points, and the label 0.5 x1 - 0.3 x2 + 0.2 plus noise."""
    rng = np.random.default_rng(seed)
    features = rng.uniform(-1.0, 1.0, (n, 2))
    labels = 0.5 * features[:, 0] - 0.3 * features[:, 1] + 0.2 + rng.normal(0.0, noise, n)
    return features.astype(np.float32), labels.astype(np.float32)


def digits(n, seed):
    """scikit-learn's 8x8 handwritten digits: images float32 (n, 1, 8, 8) scaled from 0..16 to
    [0, 1] and their digits int64 (n,), classes 0 to 9; n of the 1,797 images, picked and
    shuffled by the seed (all of them for n = 1797)."""
    from sklearn.datasets import load_digits

    data = load_digits()
    order = np.random.default_rng(seed).permutation(len(data.target))[:n]
    images = (data.images[order] / 16.0).astype(np.float32)[:, None]
    return images, data.target[order].astype(np.int64)


GENERATORS = {f.__name__: f for f in (circle, xor, gaussians, spiral, moons, plane)}
CLASSIFICATION = ("circle", "xor", "gaussians", "spiral", "moons")
IMAGES = {"digits": digits}  # (n, seed) -> (images (n, C, H, W), class indices int64 (n,))
DIGITS_COUNT = 1797
KINDS = (*GENERATORS, *IMAGES, "csv")


def make(kind, n=200, noise=0.1, seed=0):
    """(features float32 (n, 2), labels float32 (n,)) of a generated set."""
    if kind not in GENERATORS:
        raise ValueError(f"kind must be one of {', '.join(GENERATORS)}, not {kind!r}")
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    if not 0 <= noise <= 1:
        raise ValueError(f"noise must be between 0 and 1, not {noise}")
    return GENERATORS[kind](int(n), float(noise), int(seed))


def from_csv(text, features="", target="", max_elements=10_000_000):
    """(features float32 (rows, len(features)), labels float32 (rows,)) from CSV text with a
    header row. `features`: column names, comma-separated (empty: every column but the target);
    `target`: one column name (empty: the last column). A problem raises ValueError with a
    message for the user and `.param`, the dataset param it is about (csv, features, target).
    Rows count from the header, which is row 1; blank lines are skipped."""
    # imported here so that code export can copy this one function into a script as it is
    import csv
    import io

    if not isinstance(features, str):  # a list of names will do too
        features = ",".join(features)

    def fail(message, param="csv"):
        error = ValueError(message)
        error.param = param
        return error

    size = len(text.encode("utf-8"))
    if size > 1_000_000:
        raise fail(f"the CSV has {size:,} bytes; the limit is 1 MB (1,000,000 bytes)")
    reader = csv.reader(io.StringIO(text))
    rows = []  # (row number, cells)
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                rows.append((reader.line_num, [cell.strip() for cell in cells]))
    except csv.Error as exc:
        raise fail(f"row {reader.line_num} cannot be read: {exc}") from None
    if not rows:
        raise fail("the CSV is empty")
    (_, header), body = rows[0], rows[1:]
    for name in header:
        if header.count(name) > 1:
            raise fail(f"the header names the column {name!r} twice")
    for number, cells in body:
        if len(cells) != len(header):
            raise fail(
                f"row {number} has {len(cells)} values; the header has {len(header)} columns"
            )
    if len(body) < 2:
        raise fail(f"the CSV needs at least 2 rows of data under its header; it has {len(body)}")
    if len(body) * len(header) > max_elements:
        raise fail(f"the CSV has {len(body) * len(header):,} values; the limit is {max_elements:,}")
    target = target.strip() or header[-1]
    names = [name.strip() for name in features.split(",") if name.strip()]
    names = names or [name for name in header if name != target]
    columns = ", ".join(header)
    missing = [name for name in names if name not in header]
    if missing:
        which = ", ".join(repr(name) for name in missing)
        plural = "s" if len(missing) > 1 else ""
        raise fail(f"the CSV has no column{plural} {which}; its columns are {columns}", "features")
    if target not in header:
        raise fail(f"the CSV has no column {target!r}; its columns are {columns}", "target")
    if not names:
        raise fail("the CSV needs a feature column besides the target", "features")
    picked = [header.index(name) for name in [*names, target]]
    data = np.empty((len(body), len(picked)), dtype=np.float64)
    for i, (number, cells) in enumerate(body):
        for j, c in enumerate(picked):
            try:
                value = float(cells[c])
            except ValueError:
                value = None
            if value is None or not np.isfinite(value):
                raise fail(f"row {number}, column {header[c]!r}: {cells[c]!r} is not a number")
            data[i, j] = value
    return data[:, :-1].astype(np.float32), data[:, -1].astype(np.float32)


@functools.lru_cache(maxsize=8)
def _csv(text, features, target, max_elements):
    """from_csv, remembered: validation and every run of a graph read the same text."""
    x, y = from_csv(text, features, target, max_elements)
    x.flags.writeable = y.flags.writeable = False  # shared by every caller
    return x, y


# the function an exported script copies for each kind (export/script.py)
FUNCTIONS = {**GENERATORS, **IMAGES, "csv": from_csv}


@functools.lru_cache(maxsize=4)
def _images(kind, n, seed):
    """An image set, remembered (scikit-learn reads its file on every call); a missing
    scikit-learn is a problem at the kind param that says how to install it."""
    if kind == "digits" and n > DIGITS_COUNT:
        raise _problem(
            f"digits has {DIGITS_COUNT:,} images: n must be at most {DIGITS_COUNT:,}", "n"
        )
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise _problem(
            f"the {kind} images come with scikit-learn, which is not installed here: run "
            "`pip install scikit-learn` in the server's Python environment (or `pip install -e .`)",
            "kind",
        ) from None
    x, y = IMAGES[kind](n, seed)
    x.flags.writeable = y.flags.writeable = False  # shared by every caller
    return x, y


def load(params, max_elements=DEFAULT_MAX_ELEMENTS):
    """(features, labels) for a dataset node's params (kind, n, noise, seed, labels, csv,
    features, target), labels already checked for `labels: classes` (whole numbers from 0).
    An image kind gives images (n, C, H, W) and class indices int64 (n,) whatever `labels`
    and `noise` say. ValueError with `.param` for a problem."""
    kind = params.get("kind") or "circle"
    if kind in IMAGES:
        return _images(kind, int(params.get("n", 200)), int(params.get("seed", 0)))
    if kind == "csv":
        x, y = _csv(
            params.get("csv") or "",
            params.get("features") or "",
            params.get("target") or "",
            max_elements,
        )
    else:
        x, y = make(kind, params.get("n", 200), params.get("noise", 0.1), params.get("seed", 0))
    if params.get("labels") == "classes":
        if kind == "plane":
            raise _problem(
                "plane is a regression set: its labels are numbers, not classes (choose labels: "
                "column)",
                "labels",
            )
        bad = y[(y < 0) | (y != np.round(y))]
        if bad.size:
            raise _problem(
                f"classes must be whole numbers from 0; the target column has {bad[0]:g}",
                "labels",
            )
    return x, y


def _problem(message, param):
    error = ValueError(message)
    error.param = param  # validation reports the problem at this param of the dataset node
    return error
