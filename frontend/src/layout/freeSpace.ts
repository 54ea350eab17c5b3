// Where a group of new nodes goes so that it covers no node already on the canvas (an
// unpacked module, pasted nodes): the nearest free place to where it was asked for, searched
// on rings of grid steps around it, so that the nodes land beside what they came from.

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const GAP = 24; // px kept free around the group: wires between neighbours stay visible
const STEP = 40; // px: the search grid
const RINGS = 60; // rings searched (2,400 px each way) before giving up on a free place

const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width + GAP && b.x < a.x + a.width + GAP && a.y < b.y + b.height + GAP && b.y < a.y + a.height + GAP;

/** The bounding box of `boxes` (null when there are none). */
export function bounds(boxes: readonly Box[]): Box | null {
  if (!boxes.length) return null;
  const x = Math.min(...boxes.map((b) => b.x));
  const y = Math.min(...boxes.map((b) => b.y));
  const right = Math.max(...boxes.map((b) => b.x + b.width));
  const bottom = Math.max(...boxes.map((b) => b.y + b.height));
  return { x, y, width: right - x, height: bottom - y };
}

/** How far to move the group `group` (its nodes' boxes) so that none of them comes near a box
 * of `others`: {0, 0} when it is free where it is; else the nearest free shift, rightwards and
 * downwards first (where a graph's later nodes go). Whole nodes are tested, not only the
 * group's bounding box, so a group may wrap around a node that sits in a gap of it. */
export function freeShift(group: readonly Box[], others: readonly Box[]): { x: number; y: number } {
  const box = bounds(group);
  if (!box || !others.length) return { x: 0, y: 0 };
  // only the nodes within reach of the search can be in the way
  const reach = RINGS * STEP + GAP;
  const near = others.filter(
    (o) => o.x < box.x + box.width + reach && o.x + o.width > box.x - reach && o.y < box.y + box.height + reach && o.y + o.height > box.y - reach,
  );
  const free = (dx: number, dy: number) =>
    group.every((g) => {
      const moved = { ...g, x: g.x + dx, y: g.y + dy };
      return near.every((o) => !overlaps(moved, o));
    });
  if (free(0, 0)) return { x: 0, y: 0 };
  for (let ring = 1; ring <= RINGS; ring++) {
    let best: { x: number; y: number; d: number } | null = null;
    for (let i = -ring; i <= ring; i++)
      for (const [dx, dy] of [
        [i, ring],
        [ring, i],
        [i, -ring],
        [-ring, i],
      ]) {
        // nearest first; between equals, right and down before left and up
        const d = Math.hypot(dx, dy) - (dx > 0 || dy > 0 ? 0.01 : 0);
        if ((!best || d < best.d) && free(dx * STEP, dy * STEP)) best = { x: dx * STEP, y: dy * STEP, d };
      }
    if (best) return { x: best.x, y: best.y };
  }
  // nothing free nearby: below everything
  const all = bounds(others)!;
  return { x: 0, y: all.y + all.height + 2 * GAP - box.y };
}
