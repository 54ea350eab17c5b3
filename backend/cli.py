"""The `wiregrad` command: serve the editor; run, export and import graph documents; the demo.

    wiregrad serve [--host H] [--port P] [--data-dir DIR] [--device cpu|cuda] [--allow-origin URL]
                   [--allow-host NAME] [--token TOKEN] [--message-queue redis://HOST:PORT/N]
    wiregrad run GRAPH.json [--backward [NODE]]
    wiregrad export GRAPH.json --to python|torch [--trace] [-o FILE]
    wiregrad import SCRIPT.py [-o GRAPH.json]
    wiregrad demo

Errors are one clear line each on stderr (validation problems one per node), with exit status 1
(2 for a bad command line, as argparse does).
"""

import argparse
import json
import math
import sys
from pathlib import Path


class _Fail(Exception):
    """A user-facing error: its lines go to stderr and the command exits with status 1."""

    def __init__(self, *lines):
        self.lines = lines
        super().__init__("\n".join(lines))


def _parser():
    p = argparse.ArgumentParser(
        prog="wiregrad", description="Wiregrad: see autograd at work on graph documents."
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    s = sub.add_parser("serve", help="serve the editor, the API and Socket.IO runs")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=5000)
    s.add_argument("--data-dir", metavar="DIR", help="where graphs are stored (SQLite)")
    s.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    s.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="URL",
        help="another origin allowed to use the API and Socket.IO (repeatable)",
    )
    s.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another Host name the server answers to, besides loopback and its address "
        "(repeatable; others get 403, which stops DNS rebinding)",
    )
    s.add_argument(
        "--token",
        metavar="TOKEN",
        help="the teacher's secret (default: $WIREGRAD_TOKEN; beyond loopback, else a new "
        "random one); honoured on every bind, needed with --allow-host; give every process of "
        "one deployment the same",
    )
    s.add_argument(
        "--message-queue",
        metavar="URL",
        help="redis://HOST:PORT/N: share rooms and their packets with other processes",
    )
    r = sub.add_parser("run", help="run a graph document and print each node's value and grad")
    r.add_argument("graph", metavar="GRAPH.json")
    r.add_argument(
        "--backward",
        nargs="?",
        const=True,
        default=None,
        metavar="NODE",
        help="also run backward (from NODE, else the graph's target or its last scalar)",
    )
    e = sub.add_parser("export", help="write a graph document as a Python script")
    e.add_argument("graph", metavar="GRAPH.json")
    e.add_argument("--to", choices=("python", "torch"), default="python")
    e.add_argument(
        "--trace",
        action="store_true",
        help="the script prints every value and gradient, one line each (default: the loss, "
        "the accuracy and a training's curve)",
    )
    e.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write here instead of stdout; a trained graph's weights go to the .safetensors "
        "file of its name beside it (to stdout: written in the script)",
    )
    i = sub.add_parser("import", help="read a Python script (without running it) into a graph")
    i.add_argument(
        "script", metavar="SCRIPT.py", help="its weights: the SCRIPT.safetensors beside it, if any"
    )
    i.add_argument("-o", "--output", metavar="GRAPH.json", help="write here instead of stdout")
    sub.add_parser("demo", help="walk through the engine's first examples")
    return p


def _read(path):
    p = Path(path)
    if not p.exists():
        raise _Fail(f"wiregrad: {path}: file not found")
    if not p.is_file():
        raise _Fail(f"wiregrad: {path}: not a file")
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _Fail(f"wiregrad: {path}: cannot read it ({exc})") from exc


def _load(path):
    """A validated GraphDocument from a JSON file."""
    from pydantic import ValidationError

    from backend.graph import parse, validate

    text = _read(path)
    try:
        json.loads(text)
    except ValueError as exc:
        raise _Fail(f"wiregrad: {path}: invalid JSON: {exc}") from exc
    try:
        doc = parse(text)
    except ValidationError as exc:
        lines = [f"wiregrad: {path}: not a graph document:"]
        for err in exc.errors():
            where = ".".join(str(x) for x in err["loc"])
            lines.append(f"  {where}: {err['msg']}")
        raise _Fail(*lines) from exc
    problems = validate(doc)
    if problems:
        lines = [f"wiregrad: {path}: the graph cannot run ({len(problems)} problems):"]
        for pr in problems:
            where = f"node {pr.node}" if pr.node else f"edge {pr.edge}" if pr.edge else "graph"
            lines.append(f"  {where}: {pr.message}")
        raise _Fail(*lines)
    return doc


def _write(text, output):
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _Fail(f"wiregrad: {output}: cannot write it ({exc.strerror or exc})") from exc
    print(f"wrote {output}", file=sys.stderr)


def _fmt(v):
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.4g}"
    return str(v)


def _preview(t, limit=6):
    """A short text of a tensor's values: all of them when few, else the first ones."""
    if t is None:
        return ""
    flat = t.detach().reshape(-1).tolist() if t.ndim else [t.item()]
    text = ", ".join(_fmt(v) for v in flat[:limit])
    if t.ndim == 0:
        return text
    if len(flat) > limit:
        text += ", ..."
    return f"[{text}]"


def _shape(t):
    return "(" + ", ".join(str(s) for s in t.shape) + ("," if t.ndim == 1 else "") + ")"


def cmd_run(args):
    from backend.graph.running.executor import run

    doc = _load(args.graph)
    mode = "backward" if args.backward is not None else "forward"
    target = args.backward if isinstance(args.backward, str) else None
    if target is not None and target not in {n.id for n in doc.nodes}:
        raise _Fail(f"wiregrad: --backward {target}: no such node in {args.graph}")
    res = run(doc, mode, target, validated=True)
    rows = [("node", "op", "shape", "dtype", "value", "grad")]
    for n in doc.nodes:
        t = res.values.get(n.id)
        if t is None:
            rows.append((n.id, n.op, "-", "-", "(not run)", ""))
            continue
        grad = res.node_grads.get(n.id)
        rows.append(
            (n.id, n.op, _shape(t), str(t.dtype).split(".")[-1], _preview(t), _preview(grad))
        )
        for key in ("weight", "bias"):  # a linear node's own parameters
            g = res.leaf_grads.get(f"{n.id}.{key}")
            if g is not None:
                rows.append((f"{n.id}.{key}", "param", _shape(g), "", "", _preview(g)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    if res.target:
        print(f"\nbackward from {res.target}")
    if res.status != "ok":
        err = res.error or {}
        where = f"node {err['node']}: " if err.get("node") else ""
        raise _Fail(f"wiregrad: {args.graph}: the run failed: {where}{err.get('message', '')}")
    return 0


def cmd_export(args):
    """The script to -o FILE, and the values no seed gives (a trained model's) to the
    `.safetensors` file of its name beside it; to stdout, one text with every value inline."""
    from backend.graph.export import export_python

    doc = _load(args.graph)
    flavor = "torch" if args.to == "torch" else "engine"
    out = export_python(doc, flavor, trace=args.trace, inline=args.output is None)
    _write(out.text, args.output)
    data = out.weights
    if data is not None:
        path = Path(args.output).with_suffix(".safetensors")
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise _Fail(f"wiregrad: {path}: cannot write it ({exc.strerror or exc})") from exc
        print(f"wrote {path} (the weights the script loads)", file=sys.stderr)
    return 0


def cmd_import(args):
    from backend.graph.importing.importer import ImportFailed, from_python

    text = _read(args.script)
    try:
        doc = from_python(text, weights=_weights_beside(args.script))
    except ImportFailed as exc:
        lines = [f"wiregrad: {args.script}: cannot import it ({len(exc.problems)} problems):"]
        lines += [f"  {args.script}:{p.line}: {p.message}" for p in exc.problems]
        raise _Fail(*lines) from exc
    _write(doc.model_dump_json(indent=2, exclude_none=False) + "\n", args.output)
    return 0


def _weights_beside(script):
    """The bytes of the `.safetensors` file of the script's name beside it (what an exported
    script loads), None where there is none; its size checked before it is read."""
    from backend.graph.importing.weights_file import MAX_WEIGHTS_BYTES

    path = Path(script).with_suffix(".safetensors")
    if not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_WEIGHTS_BYTES:
            raise _Fail(f"wiregrad: {path}: over {MAX_WEIGHTS_BYTES // 1024**2} MiB, not read")
        return path.read_bytes()
    except OSError as exc:
        raise _Fail(f"wiregrad: {path}: cannot read it ({exc.strerror or exc})") from exc


def cmd_serve(args):
    import os

    from .server.app import serve
    from .server.auth import is_loopback, new_token
    from .server.config import Settings

    settings = Settings(
        host=args.host,
        port=args.port,
        device=args.device,
        allowed_origins=list(args.allow_origin),
        allowed_hosts=list(args.allow_host),
        message_queue=args.message_queue,
    )
    # A token given is honoured on every bind; beyond loopback there is always one (the
    # teacher holds it). Bound to loopback behind a proxy (--allow-host), everyone reaching
    # the proxy would be the one person of a loopback server: that set-up needs a token.
    token = args.token or os.environ.get("WIREGRAD_TOKEN")
    if token is None and not is_loopback(args.host):
        token = new_token()
    if token is None and args.allow_host:
        raise _Fail(
            "wiregrad: --allow-host lets others reach this server (through a proxy), so it "
            "needs the teacher's secret: give --token TOKEN or set $WIREGRAD_TOKEN (at least "
            "22 characters; python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    if token is not None:
        if len(token) < 22:
            raise _Fail("wiregrad: --token must be at least 22 characters (128 bits)")
        settings.teacher_token = token
    if args.message_queue:
        _check_queue(args.message_queue)
    if args.data_dir:
        settings.data_dir = Path(args.data_dir)
    _check_data_dir(settings.data_dir)
    if args.device == "cuda":
        import engine as eg

        if not eg.cuda.is_available():
            raise _Fail("wiregrad: --device cuda needs cupy and an NVIDIA GPU; none is usable")
    try:
        serve(settings)
    except OSError as exc:  # the port is taken, or the host is not ours
        raise _Fail(f"wiregrad: cannot serve on {args.host}:{args.port}: {exc.strerror}") from exc
    return 0


def _check_data_dir(path):
    """Fail in one line, naming the directory, when the data dir cannot be one (a file is in
    its place, or its parent cannot be written); a read-only one is served (store_errors)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise _Fail(
            f"wiregrad: the data dir {path} is a file, not a directory: move it aside or give "
            "--data-dir another path"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _Fail(
            f"wiregrad: cannot make the data dir {path}: {exc.strerror or exc}; give --data-dir "
            "a directory you can write"
        ) from exc


def _check_queue(url):
    """Fail in one line when the message queue is not a Redis that answers."""
    if not url.startswith(("redis://", "rediss://")):
        raise _Fail("wiregrad: --message-queue must be a redis:// or rediss:// URL")
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=5).ping()
    except (redis.RedisError, ValueError) as exc:
        raise _Fail(f"wiregrad: cannot reach the message queue at {url}: {exc}") from exc


def cmd_demo(args):
    from engine.__main__ import demo

    demo()
    return 0


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    commands = {
        "serve": cmd_serve,
        "run": cmd_run,
        "export": cmd_export,
        "import": cmd_import,
        "demo": cmd_demo,
    }
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return commands[args.command](args)
    except _Fail as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
