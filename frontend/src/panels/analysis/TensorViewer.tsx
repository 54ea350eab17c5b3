// One tensor of the latest run: a node's value or gradient, an edge's gradient, or a linear
// node's weight/bias. Fetched on demand (summaries carry only previews): first its shape and the
// whole tensor's stats (a page of 0 elements), then only the part shown (the first elements of a
// vector, the first 2-D slice of a matrix, at most PAGE_MAX), as a table or a heatmap; a 3-D or
// 4-D tensor also as images (ImageGrid.tsx), which fetches the pages of samples it draws. It pops
// out into a window of its own (FloatingWindow.tsx), resizable, where the grid draws every
// channel and many samples a page; it goes when its tensor does (another graph opened).
import { useEffect, useState } from "react";
import type { Nested, TensorReply } from "../../api/types";
import { formatNumber, formatShape } from "../../format/annotate";
import { getConnection } from "../../store/connection";
import { type TensorRef, useRun } from "../../store/run";
import "./analysis.css";
import FloatingWindow from "./FloatingWindow";
import Heatmap from "./Heatmap";
import ImageGrid, { ImageModes } from "./ImageGrid";
import { type GridLimits, imageDims, imagesByDefault, PANEL_LIMITS, WINDOW_LIMITS } from "./imageGrid";

const TABLE_MAX = 400;
const PAGE_MAX = 262_144; // the server's `max_tensor_page`: the most one answer holds

interface Loaded {
  shape: number[];
  dtype: string;
  values: number[]; // the shown part, row-major from the first element
  stats?: Stats; // the whole tensor's, from the server
}

type Fetch = { key: string } & (
  | { state: "loading" }
  | { state: "error"; message: string }
  | ({ state: "ok" } & Loaded)
);

/** The heading: "value of a", "gradient on edge x-a", "w.weight .grad". */
function titleOf(ref: TensorRef): string {
  if (ref.param) return `${ref.node}.${ref.param}${ref.kind === "grad" ? " .grad" : ""}`;
  if (ref.edge) return `${ref.kind === "grad" ? "gradient" : "value"} on edge ${ref.edge}`;
  return `${ref.kind === "grad" ? "gradient" : "value"} of ${ref.node}`;
}

/** JSON has no NaN or infinities: the server spells them "nan", "inf", "-inf". */
function toNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v === "inf") return Infinity;
  if (v === "-inf") return -Infinity;
  return NaN;
}

/** How many elements (from the first) the viewer shows of a tensor of `shape`. */
export function shownCount(shape: number[]): number {
  const nd = shape.length;
  if (nd === 0) return 1;
  // small enough for tables: all of it (a conv kernel's 8x1x3x3, every slice)
  const numel = shape.reduce((a, b) => a * b, 1);
  if (nd > 2 && numel <= TABLE_MAX) return numel;
  const cols = shape[nd - 1];
  if (nd === 1) return Math.min(cols, TABLE_MAX);
  const rows = Math.min(shape[nd - 2], Math.max(1, Math.floor(PAGE_MAX / Math.max(cols, 1))));
  return Math.min(rows * cols, PAGE_MAX);
}

/** Row-major values and the shape of the reply (its own shape wins over the nesting). */
function unpack(reply: TensorReply, whole: TensorReply): Loaded {
  // a page that came typed (api/typedWire.ts) is read where it lies, its nested form never
  // written out; NaN and infinities are numbers there already
  const values: number[] = reply.typed ? Array.from(reply.typed.numbers()) : [];
  const walk = (x: Nested) => {
    if (Array.isArray(x)) for (const y of x) walk(y);
    else values.push(toNumber(x));
  };
  if (!reply.typed) walk(reply.values);
  const st = whole.stats;
  const nan = whole.nan ?? 0;
  const inf = whole.inf ?? 0;
  const finite = (whole.numel ?? values.length) - nan - inf;
  const stats = st ? { ...st, nan, inf, finite } : undefined;
  return { shape: reply.shape, dtype: reply.dtype, values, stats };
}

interface Stats {
  min: number;
  max: number;
  mean: number;
  std: number; // population, as the server's summaries
  norm: number;
  nan: number;
  inf: number;
  finite: number;
}

function statsOf(values: number[]): Stats {
  let nan = 0;
  let inf = 0;
  let n = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  let scale = 0;
  for (const v of values) {
    if (Number.isNaN(v)) nan++;
    else if (!Number.isFinite(v)) inf++;
    else {
      n++;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
      const a = Math.abs(v);
      if (a > scale) scale = a;
    }
  }
  const mean = n ? sum / n : NaN;
  // two passes, scaled by the largest magnitude, so huge values do not overflow the squares
  const s = scale || 1;
  let dev = 0;
  let sq = 0;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    dev += ((v - mean) / s) ** 2;
    sq += (v / s) ** 2;
  }
  return {
    min: n ? min : NaN,
    max: n ? max : NaN,
    mean,
    std: n ? Math.sqrt(dev / n) * s : NaN,
    norm: Math.sqrt(sq) * s,
    nan,
    inf,
    finite: n,
  };
}

/** White at 0, toward blue for negatives and red for positives, saturating at ±range. */
function ValueTable({ values, rows, cols, vector }: { values: number[]; rows: number; cols: number; vector: boolean }) {
  const colIdx = Array.from({ length: cols }, (_, j) => j);
  return (
    <div className="tv-table-wrap">
      <table className="tv-table" aria-label="tensor values">
        <thead>
          <tr>
            <th scope="col" className="tv-corner" aria-label={vector ? "index" : "row \\ column"} />
            {colIdx.map((j) => (
              <th key={j} scope="col">
                {j}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {Array.from({ length: rows }, (_, i) => (
            <tr key={i}>
              <th scope="row">{vector ? "" : i}</th>
              {colIdx.map((j) => {
                const v = values[i * cols + j];
                return (
                  <td key={j} className={v < 0 ? "tv-neg" : undefined}>
                    {formatNumber(v)}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type FetchPage = (offset: number, count: number) => Promise<number[]>;

/** The leading indices of the `k`-th 2-D slice of a tensor whose leading dims are `lead`. */
function sliceIndex(lead: number[], k: number): string {
  const idx: number[] = [];
  for (let d = lead.length - 1; d >= 0; d--) {
    idx.unshift(k % lead[d]);
    k = Math.floor(k / lead[d]);
  }
  return idx.join(", ");
}

function Body({ data, grad, fetchPage, limits }: { data: Loaded; grad: boolean; fetchPage: FetchPage; limits: GridLimits }) {
  const { shape, values } = data;
  const dims = imageDims(shape);
  // in a window every 3-D or 4-D tensor starts as its maps: a conv kernel's 3x3 ones too
  const [images, setImages] = useState(limits === WINDOW_LIMITS ? Boolean(dims) : imagesByDefault(shape));
  const s = data.stats ?? statsOf(values);
  const stat = (label: string, v: number) => (
    <div className="tv-stat">
      <dt>{label}</dt>
      <dd>{formatNumber(v)}</dd>
    </div>
  );
  const nd = shape.length;
  // the first 2-D slice of a >2-D tensor is its first rows·cols elements (row-major)
  const cols = nd >= 2 ? shape[nd - 1] : nd === 1 ? shape[0] : 1;
  // the rows that came (a slice bigger than one page shows its first rows)
  const rows = nd >= 2 ? Math.min(shape[nd - 2], Math.floor(values.length / Math.max(cols, 1))) : 1;
  const shown = rows * cols;
  const lead = shape.slice(0, Math.max(0, nd - 2));
  // a small tensor of more than two dims came whole (shownCount): every slice is shown
  const whole = nd > 2 && values.length === shape.reduce((a, b) => a * b, 1) && values.length <= TABLE_MAX;

  let view;
  if (nd === 0) {
    view = (
      <p className="tv-scalar" aria-label="scalar value">
        {formatNumber(values[0])}
      </p>
    );
  } else if (nd === 1) {
    view =
      cols <= TABLE_MAX ? (
        <ValueTable values={values} rows={1} cols={cols} vector />
      ) : (
        <>
          <p className="tv-note">The first {TABLE_MAX} of {cols} elements.</p>
          <ValueTable values={values} rows={1} cols={TABLE_MAX} vector />
        </>
      );
  } else if (dims && images) {
    view = <ImageGrid dims={dims} grad={grad} pageMax={PAGE_MAX} fetchPage={fetchPage} limits={limits} />;
  } else if (whole) {
    // the whole tensor, small: every 2-D slice, each under its index
    const slice = rows * cols;
    view = (
      <div className="tv-slices">
        {Array.from({ length: values.length / Math.max(slice, 1) }, (_, k) => (
          <figure key={k} className="tv-slice" aria-label={`slice ${sliceIndex(lead, k)}`}>
            <figcaption className="tv-note">[{sliceIndex(lead, k)}, :, :]</figcaption>
            <ValueTable values={values.slice(k * slice, (k + 1) * slice)} rows={rows} cols={cols} vector={false} />
          </figure>
        ))}
      </div>
    );
  } else {
    view = (
      <>
        {nd >= 2 && rows < shape[nd - 2] && (
          <p className="tv-note">
            The first {rows} of {shape[nd - 2]} rows.
          </p>
        )}
        {nd > 2 && (
          <p className="tv-note">
            A {nd}-D tensor: showing the first 2-D slice [{lead.map(() => "0").join(", ")}, :, :]
            of {lead.reduce((a, b) => a * b, 1)}.
          </p>
        )}
        {shown > 0 && <Heatmap values={values} rows={rows} cols={cols} />}
        {shown <= TABLE_MAX ? (
          <ValueTable values={values} rows={rows} cols={cols} vector={false} />
        ) : (
          <p className="tv-note">
            {shown} elements: too many for a table (up to {TABLE_MAX}); hover the heatmap.
          </p>
        )}
      </>
    );
  }

  return (
    <>
      <dl className="tv-stats">
        <div className="tv-stat">
          <dt>shape</dt>
          <dd>{formatShape(shape)}</dd>
        </div>
        <div className="tv-stat">
          <dt>dtype</dt>
          <dd>{data.dtype}</dd>
        </div>
        {s.finite > 0 && (
          <>
            {stat("min", s.min)}
            {stat("max", s.max)}
            {stat("mean", s.mean)}
            {stat("std", s.std)}
            {stat("norm", s.norm)}
          </>
        )}
        <div className={`tv-stat${s.nan ? " tv-bad" : ""}`}>
          <dt>nan</dt>
          <dd>{s.nan}</dd>
        </div>
        <div className={`tv-stat${s.inf ? " tv-bad" : ""}`}>
          <dt>inf</dt>
          <dd>{s.inf}</dd>
        </div>
      </dl>
      {dims && <ImageModes images={images} setImages={setImages} whole={whole} />}
      {view}
    </>
  );
}

/** The tensor `ref` of the latest run, fetched as the viewer shows it. */
function useTensor(ref: TensorRef) {
  const runId = useRun((s) => s.runId);
  const running = useRun((s) => s.running); // a run's tensors can be fetched once it ends
  const [result, setFetched] = useState<Fetch>({ key: "", state: "loading" });
  const { node, edge, kind, param } = ref;
  const key = JSON.stringify([runId, running, node, edge, kind, param]);
  useEffect(() => {
    if (!runId) {
      setFetched({ key, state: "error", message: "Run the graph first: there is no run to show." });
      return;
    }
    if (running) return;
    let live = true;
    const where = edge ? { edge } : { node: node ?? "" };
    const conn = getConnection();
    conn
      .tensor(runId, where, kind, param, { offset: 0, count: 0 })
      .then(async (whole) => {
        const count = shownCount(whole.shape);
        const page = await conn.tensor(runId, where, kind, param, { offset: 0, count });
        if (live) setFetched({ key, state: "ok", ...unpack(page, whole) });
      })
      .catch((err: unknown) =>
        live && setFetched({ key, state: "error", message: err instanceof Error ? err.message : String(err) }),
      );
    return () => {
      live = false;
    };
  }, [key, runId, running, node, edge, kind, param]);
  // a page of this tensor, for the image grid (a new grid for each tensor: Body's key)
  const fetchPage: FetchPage = (offset, count) =>
    getConnection()
      .tensor(runId ?? "", edge ? { edge } : { node: node ?? "" }, kind, param, { offset, count })
      .then((reply) => unpack(reply, reply).values);
  // a result for another tensor (or run) is stale: loading until this one's arrives
  const fetched: Fetch = result.key === key ? result : { key, state: "loading" };
  return { key, fetched, fetchPage, running };
}

/** The tensor's stats and its table, heatmap or maps, as many as `limits` allow. */
function TensorContent({ tensor, limits }: { tensor: TensorRef; limits: GridLimits }) {
  const { key, fetched, fetchPage, running } = useTensor(tensor);
  return (
    <>
      {fetched.state === "loading" && (
        <p className="tv-note">{running ? "Waiting for the run to finish…" : "Loading…"}</p>
      )}
      {fetched.state === "error" && (
        <p className="tv-error" role="alert">
          {fetched.message}
        </p>
      )}
      {fetched.state === "ok" && (
        <Body key={key} data={fetched} grad={tensor.kind === "grad"} fetchPage={fetchPage} limits={limits} />
      )}
    </>
  );
}

/** A window with an arrow out of it, drawn (the character ⧉ is missing from many fonts). */
function PopOutIcon() {
  return (
    <svg width={14} height={14} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M2 4h6v1.5H3.5v7h7V10H12v4H2zM9 2h5v5h-1.5V4.6L7.6 9.5 6.5 8.4l4.9-4.9H9z" fill="currentColor" />
    </svg>
  );
}

const toneOf = (ref: TensorRef) => (ref.kind === "grad" ? "tv-grad" : "tv-value");

/** The tensor view in its side panel tab (or, popped out, a word that it is in its window). */
export default function TensorViewer() {
  const ref = useRun((s) => s.viewing);
  const popped = useRun((s) => s.viewWindow);
  const { view, popOut } = useRun.getState();
  if (!ref) return null;
  return (
    <section className={`tv-panel ${toneOf(ref)}`} role="region" aria-label="tensor viewer">
      <header className="tv-header">
        <h2 className="tv-title">{titleOf(ref)}</h2>
        <button
          type="button"
          className="tv-close"
          aria-label="pop out"
          aria-pressed={popped}
          title="in a window of its own: resizable, every channel and many samples"
          onClick={() => popOut(!popped)}
        >
          <PopOutIcon />
        </button>
        <button type="button" className="tv-close" aria-label="close tensor viewer" onClick={() => view(null)}>
          ×
        </button>
      </header>
      {popped ? (
        <p className="tv-note">
          Shown in its own window.{" "}
          <button type="button" className="small" onClick={() => popOut(false)}>
            back here
          </button>
        </p>
      ) : (
        <TensorContent tensor={ref} limits={PANEL_LIMITS} />
      )}
    </section>
  );
}

/** The tensor view popped out: over the page whatever tab the side panel shows, until it is
 * put back, closed, or its tensor goes (another graph, a refused run). */
export function TensorWindow() {
  const ref = useRun((s) => s.viewing);
  const popped = useRun((s) => s.viewWindow);
  if (!ref || !popped) return null;
  return (
    <FloatingWindow
      title={<span className="tv-title">{titleOf(ref)}</span>}
      label="tensor window"
      className={toneOf(ref)}
      onClose={() => useRun.getState().popOut(false)}
    >
      <TensorContent tensor={ref} limits={WINDOW_LIMITS} />
    </FloatingWindow>
  );
}
