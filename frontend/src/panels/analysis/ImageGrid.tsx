// The tensor viewer's "images" mode: a batch (N, C, H, W) (or one (C, H, W)) as a grid of small
// maps, a row per sample and a column per channel, each drawn one pixel per element and scaled up
// without smoothing. Values use a sequential scale over what is drawn, gradients a diverging one
// centred on 0, so a user sees what each conv channel computes and where the loss pushes it. The
// grid fetches only the page of samples it draws (docs/protocol.md, "tensor").
import { Fragment, type MouseEvent, useEffect, useMemo, useRef, useState } from "react";
import { formatNumber } from "../../format/annotate";
import "./images.css";
import {
  colourAt,
  type GridLimits,
  type GridPage,
  gridPage,
  type ImageDims,
  mapPixels,
  neighbours,
  PANEL_LIMITS,
  type Scale,
  scaleOfPage,
  zoomOf,
} from "./imageGrid";

interface Props {
  dims: ImageDims;
  grad: boolean;
  pageMax: number;
  /** `count` elements from flat index `offset`, as numbers (NaN for the server's "nan"). */
  fetchPage(offset: number, count: number): Promise<number[]>;
  /** How much one page draws: the side panel's few, or a window's every channel. */
  limits?: GridLimits;
}

type Loaded = { start: number } & ({ state: "loading" } | { state: "error"; message: string } | { state: "ok"; values: number[] });

export default function ImageGrid({ dims, grad, pageMax, fetchPage, limits = PANEL_LIMITS }: Props) {
  const [start, setStart] = useState(0);
  const [loaded, setLoaded] = useState<Loaded>({ start: -1, state: "loading" });
  const page = useMemo(() => gridPage(dims, start, pageMax, limits), [dims, start, pageMax, limits]);
  const { prev, next } = neighbours(dims, page, pageMax, limits);

  useEffect(() => {
    let live = true;
    fetchPage(page.offset, page.count)
      .then((values) => live && setLoaded({ start: page.start, state: "ok", values }))
      .catch((err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        if (live) setLoaded({ start: page.start, state: "error", message });
      });
    return () => {
      live = false;
    };
    // fetched again only when the page moves: the viewer gives a new grid (its key) for
    // another tensor or run, so fetchPage is always this tensor's
  }, [page.offset, page.count, page.start]);

  if (page.rows === 0) return <p className="tv-note">No maps to draw: the tensor has no samples or channels.</p>;
  const last = page.start + page.rows - 1;
  const current = loaded.start === page.start ? loaded : { state: "loading" as const };
  return (
    <figure className="ig" aria-label="images">
      <div className="ig-controls">
        <button type="button" disabled={prev === null} onClick={() => prev !== null && setStart(prev)} aria-label="previous samples">
          ‹
        </button>
        <span className="ig-range" aria-live="polite">
          samples {page.start}–{last} of {dims.n} ·{" "}
          {dims.c === 1 ? "1 channel" : `channels 0–${page.cols - 1} of ${dims.c}`} · {dims.h}×{dims.w}
        </span>
        <button type="button" disabled={next === null} onClick={() => next !== null && setStart(next)} aria-label="next samples">
          ›
        </button>
      </div>
      {current.state === "loading" && <p className="tv-note">Loading…</p>}
      {current.state === "error" && (
        <p className="tv-error" role="alert">
          {current.message}
        </p>
      )}
      {current.state === "ok" && <Grid dims={dims} page={page} values={current.values} grad={grad} mapPx={limits.mapPx} />}
    </figure>
  );
}

function Grid(props: { dims: ImageDims; page: GridPage; values: number[]; grad: boolean; mapPx: number }) {
  const { dims, page, values, grad, mapPx } = props;
  const scale = useMemo(() => scaleOfPage(values, page, dims, grad), [values, page, dims, grad]);
  const [hover, setHover] = useState<string | null>(null);
  const zoom = zoomOf(dims.h, dims.w, mapPx);
  const map = dims.h * dims.w;
  const channels = Array.from({ length: page.cols }, (_, j) => j);
  const mapAt = (r: number, j: number) => (
    <MapCanvas
      key={j}
      values={values}
      from={r * page.stride + j * map}
      h={dims.h}
      w={dims.w}
      zoom={zoom}
      scale={scale}
      label={`sample ${page.start + r}, channel ${j}`}
      onHover={setHover}
    />
  );
  return (
    <>
      <div className="ig-scroll" tabIndex={0} aria-label="image grid, scrollable">
        {page.cols === 1 ? (
          // one channel: the samples side by side, wrapping, as a sheet of pictures
          <div className="ig-tiles">
            {Array.from({ length: page.rows }, (_, r) => (
              <div key={r} className="ig-tile">
                <span className="ig-head">#{page.start + r}</span>
                {mapAt(r, 0)}
              </div>
            ))}
          </div>
        ) : (
          <div className="ig-grid" style={{ gridTemplateColumns: `auto repeat(${page.cols}, max-content)` }}>
            <span />
            {channels.map((j) => (
              <span key={j} className="ig-head">
                ch {j}
              </span>
            ))}
            {Array.from({ length: page.rows }, (_, r) => (
              <Fragment key={r}>
                <span className="ig-head ig-sample">#{page.start + r}</span>
                {channels.map((j) => mapAt(r, j))}
              </Fragment>
            ))}
          </div>
        )}
      </div>
      <Legend scale={scale} grad={grad} />
      <figcaption className="tv-hover" aria-live="polite">
        {hover ?? "hover a map for its values"}
      </figcaption>
    </>
  );
}

interface MapProps {
  values: number[];
  from: number;
  h: number;
  w: number;
  zoom: number;
  scale: Scale;
  label: string;
  onHover(text: string | null): void;
}

function MapCanvas({ values, from, h, w, zoom, scale, label, onHover }: MapProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const ctx = ref.current?.getContext("2d");
    if (!ctx) return;
    const img = ctx.createImageData(w, h);
    img.data.set(mapPixels(values, from, h, w, scale));
    ctx.putImageData(img, 0, 0);
  }, [values, from, h, w, scale]);

  const onMove = (e: MouseEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const x = Math.floor(((e.clientX - box.left) / box.width) * w);
    const y = Math.floor(((e.clientY - box.top) / box.height) * h);
    if (x >= 0 && x < w && y >= 0 && y < h) onHover(`${label}, [${y}, ${x}] = ${formatNumber(values[from + y * w + x])}`);
  };
  return (
    <canvas
      ref={ref}
      className="ig-map"
      width={w}
      height={h}
      style={{ width: w * zoom, height: h * zoom }}
      role="img"
      aria-label={label}
      onMouseMove={onMove}
      onMouseLeave={() => onHover(null)}
    />
  );
}

/** The viewer's choice for a 3-D or 4-D tensor: the image grid, or its numbers (its first 2-D
 * slice; every slice of a small one, `whole`). */
export function ImageModes(props: { images: boolean; setImages(on: boolean): void; whole?: boolean }) {
  const { images, setImages, whole } = props;
  return (
    <div className="tv-modes" role="group" aria-label="show as">
      <button type="button" aria-pressed={images} onClick={() => setImages(true)}>
        images
      </button>
      <button type="button" aria-pressed={!images} onClick={() => setImages(false)}>
        {whole ? "all slices" : "first slice"}
      </button>
    </div>
  );
}

const LEGEND_STEPS = 64;

/** The colour bar with its ends (and 0 in the middle of a gradient's). */
function Legend({ scale, grad }: { scale: Scale; grad: boolean }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const ctx = ref.current?.getContext("2d");
    if (!ctx) return;
    const img = ctx.createImageData(LEGEND_STEPS, 1);
    for (let k = 0; k < LEGEND_STEPS; k++) {
      const v = scale.lo + ((scale.hi - scale.lo) * k) / (LEGEND_STEPS - 1);
      img.data.set([...colourAt(v, scale), 255], 4 * k);
    }
    ctx.putImageData(img, 0, 0);
  }, [scale]);
  const what = grad ? "gradient: blue negative, white 0, red positive" : "value";
  return (
    <div className="ig-legend" aria-label={`colour scale from ${formatNumber(scale.lo)} to ${formatNumber(scale.hi)}`}>
      <span className="ig-min">{formatNumber(scale.lo)}</span>
      <canvas ref={ref} width={LEGEND_STEPS} height={1} className="ig-bar" />
      <span className="ig-max">{formatNumber(scale.hi)}</span>
      <span className="ig-what">{what}</span>
    </div>
  );
}
