// Which connections the canvas accepts while the user drags a wire: no cycles, no second edge
// into an input that takes one, no wire from a node to itself.
import type { OpSpec } from "../api/types";

interface Wire {
  source: string;
  target: string;
  targetHandle?: string | null;
}

/** True when a path already leads from `from` to `to` along the edges. */
export function reaches(edges: Wire[], from: string, to: string): boolean {
  const out = new Map<string, string[]>();
  for (const e of edges) {
    const list = out.get(e.source);
    if (list) list.push(e.target);
    else out.set(e.source, [e.target]);
  }
  const seen = new Set<string>([from]);
  const stack = [from];
  while (stack.length) {
    const n = stack.pop()!;
    if (n === to) return true;
    for (const m of out.get(n) ?? []) {
      if (!seen.has(m)) {
        seen.add(m);
        stack.push(m);
      }
    }
  }
  return false;
}

/** Why the wire `c` cannot be added (a sentence for the user), or null when it can. */
export function connectionProblem(
  edges: Wire[],
  c: Wire,
  targetOp: OpSpec | undefined,
): string | null {
  if (c.source === c.target) return "a node cannot feed itself";
  const port = targetOp?.inputs.find((p) => p.name === c.targetHandle);
  if (targetOp && !port) return `${targetOp.name} has no input '${c.targetHandle}'`;
  if (port && !port.variadic) {
    const taken = edges.some((e) => e.target === c.target && e.targetHandle === c.targetHandle);
    if (taken) return `input '${c.targetHandle}' already has an edge`;
  }
  if (reaches(edges, c.target, c.source)) return "this wire would make a cycle";
  return null;
}
