"""Packed trace records (docs/protocol.md, "Packed records"): a run sends its values and
gradients as packs, one record for a run of many, and these are the records they stand for.

    {"kind": "values", "nodes": [id, ...], "summary": [row, ...], "cached"?: true}
        one {"kind": "value", "node": id, "summary": row} per node (with "cached": true)
    {"kind": "grads", "items": [item, ...], "summary": [row, ...]}
        per item: a node id -> {"kind": "node_grad", "node": id, "summary": row}
                  [edge, source, target] -> {"kind": "edge_grad", "edge": edge,
                                             "source": source, "target": target, "summary": row}

Readers of a run's records one by one (tests, the command line, `run_records`) take them
through `expand_records`; the page does the same (frontend/src/api/summaryRows.ts)."""

from .summary import row_summary

PACKED = ("values", "grads")


def unpack(rec):
    """The ordinary records a record stands for: a pack's, in order, or the record itself."""
    kind = rec["kind"]
    if kind == "values":
        extra = {"cached": True} if rec.get("cached") else {}
        return [
            {"kind": "value", "node": nid, "summary": row, **extra}
            for nid, row in zip(rec["nodes"], rec["summary"])
        ]
    if kind == "grads":
        return [
            {"kind": "node_grad", "node": item, "summary": row}
            if isinstance(item, str)
            else {
                "kind": "edge_grad",
                "edge": item[0],
                "source": item[1],
                "target": item[2],
                "summary": row,
            }
            for item, row in zip(rec["items"], rec["summary"])
        ]
    return [rec]


def unpack_all(records):
    """Every record unpacked, in order."""
    out = []
    for rec in records:
        if rec["kind"] in PACKED:
            out.extend(unpack(rec))
        else:
            out.append(rec)
    return out


def count(rec):
    """How many ordinary records a record stands for (a table of summaries: none)."""
    kind = rec["kind"]
    if kind == "values":
        return len(rec["nodes"])
    if kind == "grads":
        return len(rec["items"])
    return 0 if kind == "summaries" else 1


def expand_records(records):
    """Records as single dicts: packs unpacked, each `summary` row number replaced by its
    summary, and the `summaries` tables left out."""
    rows = {}  # row number -> (table, row in it)
    out = []
    for rec in unpack_all(records):
        kind = rec["kind"]
        if kind == "summaries":
            first = rec["first"]
            for k in range(rec["rows"]):
                rows[first + k] = (rec, k)
            continue
        s = rec.get("summary")
        if isinstance(s, int):
            rec = dict(rec, summary=row_summary(*rows[s]))
        out.append(rec)
    return out
