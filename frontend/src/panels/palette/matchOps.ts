// Finding ops by what one types (the palette's search box and the canvas's quick-add): every
// word must appear in the op's name, category or doc; exact names first, then prefixes, then
// the rest.
import type { OpSpec } from "../../api/types";

export function matchOps(ops: OpSpec[], query: string): OpSpec[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return ops;
  const hits = ops.filter((op) => {
    const text = `${op.name} ${op.category} ${op.doc}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  const q = words[0];
  const rank = (op: OpSpec) => (op.name === q ? 0 : op.name.startsWith(q) ? 1 : op.name.includes(q) ? 2 : 3);
  return hits.sort((a, b) => rank(a) - rank(b));
}
