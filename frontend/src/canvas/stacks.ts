// Repeated blocks read as a stack: a chain of instances of one module, each feeding the next
// (a transformer's `blocks.0` … `blocks.11`, ResNet's stages), is laid out as one column of
// instances, one under the other, instead of a row twelve blocks long. The layout places the
// stack as one tall box (canvas/layout.ts), then opens it into its instances.
import type { XYPosition } from "@xyflow/react";
import type { Box, Link } from "../layout/layered";

export const STACK_MIN = 3; // fewer repeats read well in a row
export const STACK_GAP = 18; // px between the instances of a stack

interface Instance {
  id: string;
  data: { op: string; params: Record<string, unknown> };
}

/** The chains of `STACK_MIN` or more instances of one module where each one's only reader of
 * that module is the next, and the next's only such source is it; in their order. */
export function repeatedChains(nodes: readonly Instance[], links: readonly Link[]): string[][] {
  const moduleOf = new Map<string, string>();
  for (const n of nodes) if (n.data.op === "module") moduleOf.set(n.id, String(n.data.params.module ?? ""));
  const next = new Map<string, Set<string>>();
  const prev = new Map<string, Set<string>>();
  for (const l of links) {
    const m = moduleOf.get(l.source);
    if (m === undefined || l.source === l.target || moduleOf.get(l.target) !== m) continue;
    if (!next.has(l.source)) next.set(l.source, new Set());
    if (!prev.has(l.target)) prev.set(l.target, new Set());
    next.get(l.source)!.add(l.target);
    prev.get(l.target)!.add(l.source);
  }
  const follows = (id: string) => {
    const to = next.get(id);
    if (!to || to.size !== 1) return null;
    const [t] = to;
    return prev.get(t)!.size === 1 ? t : null;
  };
  const led = new Set<string>(); // nodes that follow another in a chain
  for (const id of moduleOf.keys()) {
    const t = follows(id);
    if (t) led.add(t);
  }
  const chains: string[][] = [];
  for (const n of nodes) {
    if (!moduleOf.has(n.id) || led.has(n.id)) continue;
    const chain = [n.id];
    const seen = new Set(chain);
    for (let t = follows(n.id); t && !seen.has(t); t = follows(t)) {
      chain.push(t);
      seen.add(t);
    }
    if (chain.length >= STACK_MIN) chains.push(chain);
  }
  return chains;
}

/** The boxes and links with each chain as one box (its first instance's id, as wide as the
 * widest, as tall as all of them one under the other), and how to open the stacks again. */
export function asStacks(boxes: readonly Box[], links: readonly Link[], chains: readonly string[][]) {
  const size = new Map(boxes.map((b) => [b.id, b]));
  const head = new Map<string, string>();
  for (const c of chains) for (const id of c) head.set(id, c[0]);
  const stacked: Box[] = [];
  for (const b of boxes) {
    const h = head.get(b.id);
    if (h === undefined) stacked.push(b);
    else if (h === b.id) {
      const members = chains.find((c) => c[0] === h)!.map((id) => size.get(id)!);
      stacked.push({
        id: h,
        width: Math.max(...members.map((m) => m.width)),
        height: members.reduce((s, m) => s + m.height, 0) + STACK_GAP * (members.length - 1),
      });
    }
  }
  const via = (id: string) => head.get(id) ?? id;
  const seen = new Set<string>();
  const joined: Link[] = [];
  for (const l of links) {
    const s = via(l.source);
    const t = via(l.target);
    const key = `${s}\u0000${t}`;
    if (s === t || seen.has(key)) continue;
    seen.add(key);
    joined.push({ source: s, target: t });
  }
  /** The positions with each stack's box opened into its instances, one under the other. */
  const unstack = (at: Record<string, XYPosition>): Record<string, XYPosition> => {
    const out = { ...at };
    for (const c of chains) {
      const top = at[c[0]];
      if (!top) continue;
      let y = top.y;
      for (const id of c) {
        out[id] = { x: top.x, y };
        y += size.get(id)!.height + STACK_GAP;
      }
    }
    return out;
  };
  return { boxes: stacked, links: joined, unstack };
}

/** A stored layout that flows left to right (an imported script's row) with each chain that
 * lies along one row turned into a stack at its first instance's place: the instances one
 * under the other, what came after the chain moved left by the length it took, what sat
 * beside it (none, in a chain of blocks) under the stack. `at` itself when nothing moved. */
export function stackedRows(
  at: Record<string, XYPosition>,
  boxes: readonly Box[],
  chains: readonly string[][],
): Record<string, XYPosition> {
  const size = new Map(boxes.map((b) => [b.id, b]));
  let out = at;
  for (const c of chains) {
    if (!c.every((id) => out[id] && size.has(id))) continue;
    const first = out[c[0]];
    const last = out[c[c.length - 1]];
    const inRow = c.every((id, i) => Math.abs(out[id].y - first.y) < 1 && (i === 0 || out[id].x > out[c[i - 1]].x));
    if (!inRow) continue;
    const members = new Set(c);
    const dx = last.x - first.x;
    const next: Record<string, XYPosition> = {};
    let y = first.y;
    for (const id of c) {
      next[id] = { x: first.x, y };
      y += size.get(id)!.height + STACK_GAP;
    }
    for (const [id, p] of Object.entries(out)) {
      if (members.has(id)) continue;
      if (p.x > last.x) next[id] = { x: p.x - dx, y: p.y };
      else if (p.x > first.x) next[id] = { x: first.x, y: y + (p.y - first.y) }; // beside: under it
      else next[id] = p;
    }
    out = next;
  }
  return out;
}
