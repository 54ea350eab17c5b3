// Module definitions as a whole, the pure part: renaming one (every instance and nested use
// follows), deleting one (and who uses it), and pasted instances made new ones. A canvas with
// modules open holds the document in several places: the level shown (the innermost open
// definition, or the graph), each open frame's level above it, and `meta.modules` (whose
// entries of the open definitions are written back when they close). Each edit here is applied
// to all of them alike, so that closing the levels later gives the same document.
import type { DocEdge, DocNode, ModuleDef } from "../api/types";
import type { DocMeta, Frame, OpNode, WireEdge } from "./convert";
import { closeAll, MODULE_OP, nextSeed } from "./modules";

type AnyNode = DocNode | OpNode;
type AnyEdge = DocEdge | WireEdge;

const paramsOf = (n: AnyNode) => ("data" in n ? n.data.params : n.params);
const isInstanceOf = (n: AnyNode, name: string) =>
  ("data" in n ? n.data.op : n.op) === MODULE_OP && paramsOf(n).module === name;
function withParams<N extends AnyNode>(n: N, params: Record<string, unknown>): N {
  return "data" in n ? { ...n, data: { ...n.data, params } } : { ...n, params };
}

interface Levels {
  nodes: OpNode[];
  edges: WireEdge[];
  meta: DocMeta;
}

/** `edit` applied to every level the canvas holds: the one shown, each open frame's, and each
 * definition's. */
function everyLevel(
  s: Levels,
  edit: <N extends AnyNode, E extends AnyEdge>(nodes: N[], edges: E[]) => { nodes: N[]; edges: E[] },
): { nodes: OpNode[]; edges: WireEdge[]; open: Frame[]; modules: ModuleDef[] } {
  const shown = edit(s.nodes, s.edges);
  const open = (s.meta.open ?? []).map((f) => ({ ...f, ...edit(f.nodes, f.edges) }));
  const modules = (s.meta.modules ?? []).map((m) => ({ ...m, ...edit(m.nodes, m.edges) }));
  return { ...shown, open, modules };
}

/** The document with module `from` called `to`: its definition, the instances of it at every
 * level and inside other definitions, and the open frames of it. Instance ids stay as they are
 * (they key the run's records). The caller checks `to` (doc/modules.ts moduleNameProblem). */
export function renameModule(s: Levels, from: string, to: string) {
  const { nodes, open, modules } = everyLevel(s, (nodes, edges) => ({
    nodes: nodes.map((n) => (isInstanceOf(n, from) ? withParams(n, { ...paramsOf(n), module: to }) : n)),
    edges,
  }));
  const meta: DocMeta = {
    ...s.meta,
    modules: modules.map((m) => (m.name === from ? { ...m, name: to } : m)),
    open: open.map((f) => (f.module === from ? { ...f, module: to } : f)),
  };
  return { nodes, meta };
}

/** Where module `name` is used: its instances in the graph (`in` null) and inside other
 * definitions (`in` that module's name), the open levels as they are being edited. */
export function moduleUses(s: Levels, name: string): { in: string | null; id: string }[] {
  const top = closeAll(s.nodes, s.edges, s.meta);
  const uses = top.nodes.filter((n) => isInstanceOf(n, name)).map((n) => ({ in: null as string | null, id: n.id }));
  for (const m of top.modules)
    for (const n of m.nodes) if (isInstanceOf(n, name)) uses.push({ in: m.name, id: n.id });
  return uses;
}

/** The uses in words: "block1, block2 in the graph; b in Outer". */
export function describeUses(uses: { in: string | null; id: string }[]) {
  const groups = new Map<string | null, string[]>();
  for (const u of uses) groups.set(u.in, [...(groups.get(u.in) ?? []), u.id]);
  return [...groups].map(([where, ids]) => `${ids.join(", ")} ${where === null ? "in the graph" : `in ${where}`}`).join("; ");
}

/** The document without module `name`; with `withUses`, without its instances either (and the
 * wires into and out of them), at every level. Throws an Error in the user's words when it
 * cannot go: it is open on the canvas, or it is used and `withUses` is not set. */
export function deleteModule(s: Levels, name: string, withUses: boolean) {
  if ((s.meta.open ?? []).some((f) => f.module === name))
    throw new Error(`${name} is open on the canvas: go back out of it first`);
  const uses = moduleUses(s, name);
  if (uses.length && !withUses)
    throw new Error(`${name} is used by ${describeUses(uses)}: delete ${uses.length > 1 ? "them" : "it"} first, or with it`);
  const { nodes, edges, open, modules } = everyLevel(s, (nodes, edges) => {
    const gone = new Set(nodes.filter((n) => isInstanceOf(n, name)).map((n) => n.id));
    if (!gone.size) return { nodes, edges };
    return { nodes: nodes.filter((n) => !gone.has(n.id)), edges: edges.filter((e) => !gone.has(e.source) && !gone.has(e.target)) };
  });
  const meta: DocMeta = { ...s.meta, modules: modules.filter((m) => m.name !== name), open };
  return { nodes, edges, meta, removed: uses.length };
}

/** Pasted (or duplicated) nodes, each module instance among them made a new instance, as a
 * second `Block()` is in PyTorch: the next free seed of its module, so that its parameters are
 * its own, and no trained `state` (a new instance starts from its initial values). `graph`: the
 * nodes of every level open, the pasted ones not among them. */
export function asNewInstances<N extends AnyNode>(pasted: N[], graph: AnyNode[]): N[] {
  const seen: AnyNode[] = [...graph];
  return pasted.map((n) => {
    const params = paramsOf(n);
    if (!isInstanceOf(n, String(params.module))) return n;
    const seed = nextSeed(seen as DocNode[], String(params.module));
    const rest = Object.fromEntries(Object.entries(params).filter(([k]) => k !== "seed" && k !== "state"));
    const made = withParams(n, seed ? { ...rest, seed } : rest);
    seen.push(made);
    return made;
  });
}
