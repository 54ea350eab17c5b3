// The autograd view's first viewport: the whole graph fitted to its panel when it can be drawn
// there with readable text; else drawn at the smallest readable zoom and anchored at the output's
// grad_fn (where gradients start), the rest a pan or a zoom away (or the full-screen view).

export type AgDirection = "DOWN" | "LEFT"; // gradients flow down (a narrow panel) or leftwards

export const SMALLEST_TEXT_PX = 12; // .ag-line's font size at zoom 1 (analysis.css)
export const READABLE_PX = 11; // no text smaller than this on screen at first
export const READABLE_ZOOM = READABLE_PX / SMALLEST_TEXT_PX;
export const MAX_ZOOM = 1.25;
const PAD = 12;

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
  fitted: boolean; // the whole graph is in view
}

/** The zoom that shows all of `bounds` in w x h (at most MAX_ZOOM). */
export function fitZoom(bounds: Box, w: number, h: number): number {
  return Math.min((w - 2 * PAD) / Math.max(bounds.width, 1), (h - 2 * PAD) / Math.max(bounds.height, 1), MAX_ZOOM);
}

/** `bounds`: the graph's; `root`: the output's grad_fn node; `w`, `h`: the panel's size. */
export function initialViewport(bounds: Box, root: Box | null, w: number, h: number, dir: AgDirection): Viewport {
  const fit = fitZoom(bounds, w, h);
  const zoom = Math.max(fit, READABLE_ZOOM);
  const centre = (lo: number, size: number, span: number) => (span - size * zoom) / 2 - lo * zoom;
  if (zoom <= fit)
    return {
      x: centre(bounds.x, bounds.width, w),
      y: centre(bounds.y, bounds.height, h),
      zoom,
      fitted: true,
    };
  const anchor = root ?? bounds;
  // the output at the top (gradients flowing down) or at the right (flowing left); the other
  // axis centred on it, unless the whole graph fits that way
  const fitsAcross = (dir === "DOWN" ? bounds.width : bounds.height) * zoom <= (dir === "DOWN" ? w : h) - 2 * PAD;
  if (dir === "DOWN")
    return {
      x: fitsAcross ? centre(bounds.x, bounds.width, w) : centre(anchor.x, anchor.width, w),
      y: PAD - bounds.y * zoom,
      zoom,
      fitted: false,
    };
  return {
    x: w - PAD - (bounds.x + bounds.width) * zoom,
    y: fitsAcross ? centre(bounds.y, bounds.height, h) : centre(anchor.y, anchor.height, h),
    zoom,
    fitted: false,
  };
}
