// Summary tables (docs/protocol.md): the server sends a run's summaries column by column, one
// table per shape and dtype, and each record names its row; values and gradients come packed,
// one record for a run of many ("Packed records"). Here packs are unpacked and every record
// gets its summary back as one object, so that the stores and panels read records as they
// always did. Rows are numbered across a run, so each run keeps its rows: a room follower who
// joins mid-run gets the first records in the join reply and the rest in packets. The rows
// are the connection's (api/socket.ts holds one SummaryRows): they come with its packets.
// Columns of numbers come as typed arrays (api/typedWire.ts): the NaN/Inf counts as int64, the
// stats as a (rows, 5) float64 array, the previews as one (rows, ...shape) array; a table with
// non-finite stats or previews has those columns as lists (the server spells such numbers).
import { numberAt, Typed } from "./typedWire";
import type { Nested, Summary, SummaryTable, TraceRecord, WireRecord } from "./types";

const RUNS_KEPT = 4;

const STATS = ["min", "max", "mean", "std", "norm"] as const;

function statsOf(t: SummaryTable, k: number): Summary["stats"] {
  if (t.stats instanceof Typed) {
    const d = t.stats.data as Float64Array;
    return { min: d[5 * k], max: d[5 * k + 1], mean: d[5 * k + 2], std: d[5 * k + 3], norm: d[5 * k + 4] };
  }
  const row = t.stats[k];
  return row ? (Object.fromEntries(STATS.map((name, i) => [name, row[i]])) as Summary["stats"]) : null;
}

/** Row k of a table as one summary. A typed preview is written out as nested numbers only
 * when something reads it (most of a big run's previews are never shown). */
export function rowSummary(t: SummaryTable, k: number): Summary {
  const s: Summary = {
    shape: t.shape,
    dtype: t.dtype,
    numel: t.numel,
    requires_grad: t.requires_grad[k],
    grad_fn: t.grad_fn[k],
    nan: numberAt(t.nan, k),
    inf: numberAt(t.inf, k),
    stats: statsOf(t, k),
  };
  const preview = t.preview;
  if (preview instanceof Typed) {
    let nested: Nested | undefined;
    Object.defineProperty(s, "preview", {
      enumerable: true,
      configurable: true,
      get: () => (nested ??= preview.row(k).nested()),
      set: (v: Nested) => void (nested = v),
    });
  } else if (preview) s.preview = preview[k] as Nested;
  return s;
}

/** The summary rows of the last few runs, by run. */
export class SummaryRows {
  private readonly byRun = new Map<string, Map<number, Summary>>();

  private rowsOf(runId: string): Map<number, Summary> {
    let rows = this.byRun.get(runId);
    if (!rows) {
      rows = new Map();
      this.byRun.set(runId, rows);
      // a Map iterates in insertion order: the first key is the oldest run
      while (this.byRun.size > RUNS_KEPT) this.byRun.delete(this.byRun.keys().next().value!);
    }
    return rows;
  }

  /** The run's records with their summaries written out and packs unpacked in place; the
   * tables themselves are left out. A record whose row never came (a packet lost before a
   * follower joined) is left out too: it has nothing to show. In a pack only that item goes. */
  expand(runId: string, wire: WireRecord[]): TraceRecord[] {
    const rows = this.rowsOf(runId);
    const out: TraceRecord[] = [];
    for (const r of wire) {
      if (r.kind === "summaries") {
        for (let k = 0; k < r.rows; k++) rows.set(r.first + k, rowSummary(r, k));
      } else if (r.kind === "values") {
        // packs hold thousands of items: plain loops and small literals, no spread per item
        for (let i = 0; i < r.nodes.length; i++) {
          const summary = rows.get(r.summary[i]);
          if (!summary) continue;
          // a fresh value has no `cached` key, as in the records the pack stands for
          out.push(
            r.cached
              ? { kind: "value", node: r.nodes[i], summary, cached: true }
              : { kind: "value", node: r.nodes[i], summary },
          );
        }
      } else if (r.kind === "grads") {
        for (let i = 0; i < r.items.length; i++) {
          const summary = rows.get(r.summary[i]);
          if (!summary) continue;
          const item = r.items[i];
          out.push(
            typeof item === "string"
              ? { kind: "node_grad", node: item, summary }
              : { kind: "edge_grad", edge: item[0], source: item[1], target: item[2], summary },
          );
        }
      } else if ("summary" in r) {
        const summary = rows.get(r.summary);
        if (summary) out.push({ ...r, summary } as TraceRecord);
      } else out.push(r);
    }
    return out;
  }
}
