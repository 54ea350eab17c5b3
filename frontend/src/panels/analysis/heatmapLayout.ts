// The tensor viewer's heatmap size: square cells that stay big enough to see and to point at,
// in a box that scrolls when the tensor is larger than the panel (a 300x8 tensor is a column
// of 12-px cells to scroll through, not a 5-px strip squeezed to fit).

export const FIT_PX = 320; // a square-ish matrix's longer side, when its cells can be this small
export const MIN_CELL = 6; // no cell smaller: below this the colours are specks
export const MAX_CELL = 24; // nor larger: a 2x2 is not a poster
export const SHORT_SIDE_PX = 96; // a long thin tensor's short side is drawn at least this wide
export const SHORT_CELL_MAX = 16; // ...with cells up to this size

export interface HeatmapLayout {
  cell: number; // px per element, the same across and down
  width: number; // the drawn size in CSS px (it scrolls inside the panel when larger)
  height: number;
}

export function heatmapLayout(rows: number, cols: number): HeatmapLayout {
  const long = Math.max(rows, cols, 1);
  const short = Math.max(Math.min(rows, cols), 1);
  let cell = Math.floor(FIT_PX / long);
  // a thin tensor: widen its short side rather than squeeze its cells to fit the long one
  if (short * cell < SHORT_SIDE_PX) cell = Math.max(cell, Math.min(SHORT_CELL_MAX, Math.ceil(SHORT_SIDE_PX / short)));
  cell = Math.max(MIN_CELL, Math.min(MAX_CELL, cell));
  return { cell, width: cols * cell, height: rows * cell };
}
