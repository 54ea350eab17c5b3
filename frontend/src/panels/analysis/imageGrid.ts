// The tensor viewer's "images" mode, its pure part: which tensors are images, which samples and
// channels one page of the grid shows (and the flat slice of the tensor to fetch for them), the
// colour scales (sequential for values, diverging around 0 for gradients) and a map's pixels.
// ImageGrid.tsx draws what this computes.

export const MAX_ROWS = 16; // samples drawn at once in the side panel (a control pages through the rest)
export const MAX_COLS = 16; // channels drawn per sample in the side panel

export const MAP_PX = 48; // a map's longer side is scaled (nearest neighbour) to about this
export const MAX_ZOOM = 8; // ...but no element is drawn larger than this many px

/** How many samples and channels one page of the grid draws at most. */
export interface GridLimits {
  rows: number;
  cols: number;
  /** A map's longer side is scaled to about this many px (no element larger than MAX_ZOOM·2). */
  mapPx: number;
}

export const PANEL_LIMITS: GridLimits = { rows: MAX_ROWS, cols: MAX_COLS, mapPx: MAP_PX };
/** The grid popped out into its own window: every channel, as many samples a page as a
 * person scrolls through (the page's element budget permitting), maps drawn larger. */
export const WINDOW_LIMITS: GridLimits = { rows: 128, cols: Infinity, mapPx: 2 * MAP_PX };

/** A tensor seen as images: n samples of c channels of h x w maps. */
export interface ImageDims {
  n: number;
  c: number;
  h: number;
  w: number;
}

/** (N, C, H, W) as they are, (C, H, W) as one sample; null for any other rank or empty maps. */
export function imageDims(shape: number[]): ImageDims | null {
  if (shape.length !== 3 && shape.length !== 4) return null;
  const [n, c, h, w] = shape.length === 4 ? shape : [1, ...shape];
  if (h < 1 || w < 1) return null;
  return { n, c, h, w };
}

/** Images is the first mode for a batch of maps big enough to look like pictures. */
export function imagesByDefault(shape: number[]): boolean {
  return shape.length === 4 && shape[2] >= 4 && shape[3] >= 4 && shape[0] > 0 && shape[1] > 0;
}

/** One page of the grid: samples [start, start + rows), channels [0, cols), fetched as the
 * `count` elements from flat index `offset` (whole samples, or the first channels of one sample
 * when a sample alone is over a page). */
export interface GridPage {
  start: number;
  rows: number;
  cols: number;
  offset: number;
  count: number;
  stride: number; // elements from one fetched sample to the next (c·h·w, or the count of one)
}

export function gridPage(d: ImageDims, start: number, pageMax: number, limits: GridLimits = PANEL_LIMITS): GridPage {
  const map = d.h * d.w;
  const sample = d.c * map;
  const first = Math.max(0, Math.min(start, Math.max(0, d.n - 1)));
  if (sample > pageMax) {
    // one sample at a time, as many of its channels as a page holds
    const cols = Math.max(0, Math.min(limits.cols, d.c, Math.floor(pageMax / map)));
    const rows = d.n > 0 && cols > 0 ? 1 : 0;
    return { start: first, rows, cols, offset: first * sample, count: rows * cols * map, stride: cols * map };
  }
  const rows = Math.max(0, Math.min(limits.rows, d.n - first, Math.floor(pageMax / Math.max(sample, 1))));
  const cols = Math.min(limits.cols, d.c);
  return { start: first, rows, cols, offset: first * sample, count: rows * sample, stride: sample };
}

/** The first sample of the page before and after this one (null at either end): pages are a
 * full page's rows apart, the last one shorter. */
export function neighbours(
  d: ImageDims,
  page: GridPage,
  pageMax: number,
  limits: GridLimits = PANEL_LIMITS,
): { prev: number | null; next: number | null } {
  const step = Math.max(gridPage({ ...d, n: Infinity }, 0, pageMax, limits).rows, 1);
  return {
    prev: page.start > 0 ? Math.max(0, page.start - step) : null,
    next: page.start + step < d.n ? page.start + step : null,
  };
}

/** The colour scale: [lo, hi] of the finite values drawn; a gradient's is symmetric, ±max|g|. */
export interface Scale {
  diverging: boolean;
  lo: number;
  hi: number;
}

export function scaleOf(values: ArrayLike<number>, diverging: boolean): Scale {
  let lo = Infinity;
  let hi = -Infinity;
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo > hi) return { diverging, lo: diverging ? -1 : 0, hi: 1 }; // nothing finite
  if (diverging) {
    const m = Math.max(Math.abs(lo), Math.abs(hi));
    return { diverging, lo: -m, hi: m };
  }
  return { diverging, lo, hi };
}

/** The scale of the maps a page draws: its `cols` first channels of each of its rows. */
export function scaleOfPage(values: ArrayLike<number>, page: GridPage, d: ImageDims, diverging: boolean): Scale {
  const map = d.h * d.w;
  const drawn: number[] = [];
  for (let r = 0; r < page.rows; r++)
    for (let k = r * page.stride; k < r * page.stride + page.cols * map && k < values.length; k++) drawn.push(values[k]);
  return scaleOf(drawn, diverging);
}

type RGB = [number, number, number];

// viridis at five stops: dark for low, yellow for high, readable to colour-blind eyes too
const SEQUENTIAL: RGB[] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];
const NEGATIVE: RGB = [37, 99, 235]; // the viewer's heatmap colours: blue below 0, red above
const POSITIVE: RGB = [220, 38, 38];
const WHITE: RGB = [255, 255, 255];
export const NAN_COLOUR: RGB = [160, 160, 160];

function mix(a: RGB, b: RGB, t: number): RGB {
  return [0, 1, 2].map((i) => Math.round(a[i] + (b[i] - a[i]) * t)) as RGB;
}

/** A value's colour on the scale: NaN grey, infinities the scale's ends. */
export function colourAt(v: number, s: Scale): RGB {
  if (Number.isNaN(v)) return NAN_COLOUR;
  if (s.diverging) {
    const m = s.hi;
    const t = Math.max(-1, Math.min(1, m > 0 ? v / m : 0));
    return mix(WHITE, t < 0 ? NEGATIVE : POSITIVE, Math.abs(t));
  }
  const span = s.hi - s.lo;
  // a constant map is drawn at the middle of the ramp, not as the lowest colour
  const t = span > 0 ? Math.max(0, Math.min(1, (v - s.lo) / span)) : 0.5;
  const x = t * (SEQUENTIAL.length - 1);
  const i = Math.min(SEQUENTIAL.length - 2, Math.floor(x));
  return mix(SEQUENTIAL[i], SEQUENTIAL[i + 1], x - i);
}

/** The RGBA pixels of one h x w map whose first element is values[from]. */
export function mapPixels(values: ArrayLike<number>, from: number, h: number, w: number, s: Scale): Uint8ClampedArray {
  const px = new Uint8ClampedArray(h * w * 4);
  for (let k = 0; k < h * w; k++) {
    const [r, g, b] = colourAt(values[from + k], s);
    px.set([r, g, b, 255], 4 * k);
  }
  return px;
}

/** CSS px per element: the longer side near MAP_PX, at least 1, at most MAX_ZOOM. */
export function zoomOf(h: number, w: number, mapPx = MAP_PX): number {
  const most = mapPx > MAP_PX ? 2 * MAX_ZOOM : MAX_ZOOM;
  return Math.max(1, Math.min(most, Math.floor(mapPx / Math.max(h, w, 1))));
}
