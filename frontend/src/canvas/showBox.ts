// The viewport that brings a box into view (an instance just expanded in place: canvas/
// ModuleNodeView.tsx): the least pan where it fits at the zoom it has, else zoomed out until it
// fits, centred. Never zoomed in: the reader chose that zoom.
const VIEW_PAD = 24; // screen pixels kept between an expanded instance and the canvas's edge

/** The viewport that shows `box` (flow coordinates) whole on a `width` x `height` canvas, or
 * null where the current one already does. */
export function inView(
  box: { x: number; y: number; width: number; height: number },
  view: { x: number; y: number; zoom: number },
  width: number,
  height: number,
): { x: number; y: number; zoom: number } | null {
  const { x, y, zoom } = view;
  const left = box.x * zoom + x;
  const top = box.y * zoom + y;
  const fits =
    left >= VIEW_PAD &&
    top >= VIEW_PAD &&
    left + box.width * zoom <= width - VIEW_PAD &&
    top + box.height * zoom <= height - VIEW_PAD;
  if (fits || width <= 2 * VIEW_PAD || height <= 2 * VIEW_PAD) return null;
  const z = Math.min(zoom, (width - 2 * VIEW_PAD) / box.width, (height - 2 * VIEW_PAD) / box.height);
  // where it fits at the current zoom, only the least pan; else centred at the smaller zoom
  if (z === zoom) {
    const dx = Math.max(0, VIEW_PAD - left) - Math.max(0, left + box.width * zoom - (width - VIEW_PAD));
    const dy = Math.max(0, VIEW_PAD - top) - Math.max(0, top + box.height * zoom - (height - VIEW_PAD));
    return { x: x + dx, y: y + dy, zoom };
  }
  return {
    x: width / 2 - (box.x + box.width / 2) * z,
    y: height / 2 - (box.y + box.height / 2) * z,
    zoom: z,
  };
}
