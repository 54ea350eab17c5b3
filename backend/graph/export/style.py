"""The exported script's layout: formatted as `ruff format` formats it (100 columns, the
project's style), so that a colleague's editor and CI leave it as it is.

Two steps. First, a statement holding a literal too long for one line (a dataset's rows, a
layer's trained weights) is wrapped here, its numbers packed onto lines of at most 100
characters, between `# fmt: off` and `# fmt: on`: ruff would write such a list one number per
line, thousands of lines for a layer's weights. Then ruff formats the rest (quotes, blank lines,
calls split at their brackets). The docstring's description (and, where the layout block could
not take them, the `# node` comments: export/layout.py) are read back by the importer as they
are, so they are not wrapped: a script where one passes 100 characters exempts itself from the
line-length rule (EXEMPT) after its docstring. Ruff is the
`ruff` package's binary (a dependency); where it cannot be run the script is returned as the
exporter wrote it, which runs and imports the same.
"""

import io
import os
import subprocess
import sys
import tokenize

LIMIT = 100  # the project's line length (pyproject.toml [tool.ruff])
_PACK = 96  # the numbers' lines leave room for the closing brackets


def _ruff():
    """The ruff binary of the `ruff` package, or None."""
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        return None
    try:
        path = find_ruff_bin()
    except FileNotFoundError:
        return None
    return os.fsdecode(path)


def formatted(source):
    """`source` as `ruff format` writes it at 100 columns, settings of its own (not those of
    the folder the server runs in); `source` itself where ruff is missing or fails."""
    ruff = _ruff()
    if ruff is None:
        return source
    cmd = [ruff, "format", "--isolated", f"--line-length={LIMIT}", "--stdin-filename=graph.py", "-"]
    try:
        proc = subprocess.run(cmd, input=source, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return source
    return proc.stdout if proc.returncode == 0 and proc.stdout else source


# what is kept as written, and so may pass the line length: the text Wiregrad reads back
EXEMPT = (
    "# the graph's description and Wiregrad's comments are kept as written:",
    "# ruff: noqa: E501",
)


def styled(source):
    """The script wrapped (its long literals packed) and formatted; where a line still passes
    LIMIT (a description's paragraph, a long node comment), the file says so after its
    docstring and exempts itself from ruff's line-length rule."""
    out = formatted(wrapped(source))
    lines = out.split("\n")
    if all(len(line) <= LIMIT for line in lines):
        return out
    end = lines.index('"""', 1) if lines[0].startswith('"""') and '"""' in lines[1:] else -1
    return "\n".join(lines[: end + 1] + ["", *EXEMPT] + lines[end + 1 :])


def wrapped(source):
    """`source` with every line longer than LIMIT that holds a long bracketed literal packed
    onto lines within LIMIT, between `# fmt: off` and `# fmt: on`."""
    lines = source.split("\n")
    single = _one_line_statements(source)
    if single is None:
        return source
    out = []
    for number, line in enumerate(lines, 1):
        packed = _packed(line) if len(line) > LIMIT and number in single else None
        out += packed if packed is not None else [line]
    return "\n".join(out)


def _one_line_statements(source):
    """The numbers of the lines that hold one whole statement (not a line of a docstring or of
    a statement over several lines); None where the source does not tokenize."""
    out, first = set(), None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.type == tokenize.NEWLINE:
                if first == tok.start[0]:
                    out.add(first)
                first = None
            elif first is None:
                first = tok.start[0] if tok.start[0] == tok.end[0] else -1
            elif tok.end[0] != first:
                first = -1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return out


def _tokens(line):
    try:
        return list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def _packed(line):
    """The lines of one long statement line, or None where it is no one-line statement with a
    bracketed part longer than ruff could fit on a line of its own."""
    toks = _tokens(line.strip())
    if toks is None:
        return None
    pad = line[: len(line) - len(line.lstrip())]
    text = line.strip()
    comment = ""
    depth, deepest, breaks = 0, 0, []  # breaks: (depth, end column of a comma)
    opened = None  # the column after the first opening bracket
    for tok in toks:
        if tok.type == tokenize.COMMENT:
            comment = tok.string
            text = text[: tok.start[1]].rstrip()
            continue
        if tok.type != tokenize.OP:
            continue
        if tok.string in "([{":
            depth += 1
            deepest = max(deepest, depth)
            if opened is None:
                opened = tok.end[1]
        elif tok.string in ")]}":
            depth -= 1
        elif tok.string == "," and depth > 0:
            breaks.append((depth, tok.end[1]))
    if opened is None or not breaks or text.endswith(":"):
        return None
    if len(text) - opened < LIMIT - 8:  # ruff fits it on a line of its own: left to ruff
        return None
    # break at the shallowest depth whose pieces each fit on a line
    for d in range(1, deepest + 1):
        cuts = [c for k, c in breaks if k == d]
        if not cuts:
            continue
        edges = [opened, *cuts, len(text)]
        if all(b - a <= _PACK - len(pad) - 4 for a, b in zip(edges, edges[1:])):
            break
    else:
        return None
    pieces = [text[a:b].strip() for a, b in zip(edges, edges[1:])]
    lines = [pad + text[:opened]]
    inner = pad + "    "
    for piece in pieces:
        last = lines[-1]
        joined = last + ("" if last.endswith(("(", "[", "{")) or last == inner else " ") + piece
        if len(joined) <= _PACK and last != pad + text[:opened]:
            lines[-1] = joined
        else:
            lines.append(inner + piece)
    if comment:
        lines[-1] += "  " + comment
    return [pad + "# fmt: off", *lines, pad + "# fmt: on"]


def _main():  # python -m backend.graph.export.style < script.py: the script styled
    sys.stdout.write(styled(sys.stdin.read()))


if __name__ == "__main__":
    _main()
