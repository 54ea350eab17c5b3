// Modules (composite nodes), the pure part: making one from a selection, unpacking an instance,
// the document of a canvas that has modules open, and where a run's records for the nodes
// inside an instance are. The contract is backend/graph/modules.py's: an instance `b` of a
// definition runs as its nodes under ids `b/<inner id>` (nested: `a/b/<id>`), its ports'
// values are those of the nodes `b/<port>` (the definition's module_input/module_output nodes).
import type { DocEdge, DocNode, GraphDocument, ModuleDef } from "../api/types";
import { type DocMeta, freshId, type OpNode, toDocument, type WireEdge } from "./convert";

export const MODULE_OP = "module";
export const INPUT_OP = "module_input";
export const OUTPUT_OP = "module_output";
export const SEP = "/";

/** Where the run's records of the inner node `id` are, in the instance opened at `scope`
 * (the instances' ids joined by "/"; "" for the graph itself). */
export function runKey(scope: string, id: string) {
  return scope ? `${scope}${SEP}${id}` : id;
}

/** The path of the instance opened last: its records' prefix. */
export function scopeOf(meta: Pick<DocMeta, "open">) {
  return (meta.open ?? []).map((f) => f.instance).join(SEP);
}

/** The part of the run's node or edge `key` under the instance opened at `scope` (its path
 * from there: `w`, or `inner1/w` deeper in); null when it is outside that instance. */
export function underOf(scope: string, key: string): string | null {
  if (!scope) return key;
  return key.startsWith(scope + SEP) ? key.slice(scope.length + 1) : null;
}

/** Where the run's node or edge `key` is on the level opened at `scope`: itself, by its id
 * there (`inside` false), or within the instance `id` of that level (`inside` true: a node or
 * edge of a module closed on that level); null when it is outside the opened instance. */
export function shownAt(scope: string, key: string): { id: string; inside: boolean } | null {
  const rest = underOf(scope, key);
  if (rest === null) return null;
  const cut = rest.indexOf(SEP);
  return cut < 0 ? { id: rest, inside: false } : { id: rest.slice(0, cut), inside: true };
}

/** Whether the run's node or edge `key` is `at` itself or inside the instance at path `at`. */
export const isWithin = (at: string, key: string) => key === at || key.startsWith(at + SEP);

/** Whether the run's node or edge `key` is one of `paths` or inside an instance at one of them
 * (a set: one look-up per level of `key`'s path). */
export function withinAny(paths: ReadonlySet<string>, key: string) {
  for (let i = key.indexOf(SEP); i >= 0; i = key.indexOf(SEP, i + 1)) if (paths.has(key.slice(0, i))) return true;
  return paths.has(key);
}

/** How many of the levels open (`open`, outermost first) the run's `key` lies within: the depth
 * of the deepest level that shows it (0: the graph). */
export function depthShowing(open: readonly { instance: string }[], key: string): number {
  let depth = 0;
  let path = "";
  for (const f of open) {
    path = runKey(path, f.instance);
    if (!key.startsWith(path + SEP)) break;
    depth++;
  }
  return depth;
}

/** The entries of a run's table (values, gradients) for the nodes or edges inside the instance
 * at `scope`, keyed by their ids in the definition: what an opened module shows. */
export function underScope<T>(table: Record<string, T>, scope: string): Record<string, T> {
  if (!scope) return table;
  const lead = scope + SEP;
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(table)) if (k.startsWith(lead) && !k.includes(SEP, lead.length)) out[k.slice(lead.length)] = v;
  return out;
}

const KEYWORDS = new Set(
  "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield".split(
    " ",
  ),
);

/** Why `name` cannot name a new module (null: it can): it is the class name export writes. */
export function moduleNameProblem(name: string, modules: ModuleDef[]): string | null {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name))
    return "a module's name is a Python class name: a letter or _, then letters, digits or _ (at most 64)";
  if (KEYWORDS.has(name)) return `${name} is a Python keyword`;
  if (modules.some((m) => m.name === name)) return `there is a module named ${name} already`;
  return null;
}

interface Level {
  nodes: DocNode[];
  edges: DocEdge[];
}

/** A port id like `m_other` (the port `other` of inner node m) that no node in `taken` has. */
function portId(node: string, port: string, taken: Set<string>) {
  const base = `${node}_${port}`.slice(0, 60);
  const id = taken.has(base) ? freshId(`${base}_`, taken) : base;
  taken.add(id);
  return id;
}

/** A fresh id for an instance of `name`: `affine1`, `affine2`… (`block1_1` for Block1). */
export function instanceId(name: string, taken: Set<string>) {
  const stem = name.toLowerCase();
  return freshId(/\d$/.test(stem) ? `${stem}_` : stem, taken);
}

/** What a picked node's definition keeps (`params`) and what goes to the new instance's
 * `state` (trained values, by their paths under it): doc/trainedState.ts splitTrained. */
export type SplitTrained = (n: DocNode) => { params: Record<string, unknown>; state: Record<string, Record<string, unknown>> };

const keepAll: SplitTrained = (n) => ({ params: { ...n.params }, state: {} });

/** Replaces the nodes `selected` of `level` by one instance of a new module `name` made of them.
 * Each outside source wired in becomes one input (named after the inner port it feeds first),
 * each inner source wired out one output; the edges across keep their ids, outside. `split`
 * keeps trained values out of the definition and in the instance's state, as an nn.Module's
 * class holds no trained weights. Throws an Error in the user's words when the selection
 * cannot be one node. */
export function makeModule(level: Level, selected: string[], name: string, taken: Set<string>, split: SplitTrained = keepAll) {
  const inside = new Set(selected);
  const picked = level.nodes.filter((n) => inside.has(n.id));
  if (!picked.length) throw new Error("select the nodes to put into the module first");
  for (const n of picked)
    if (n.op === INPUT_OP || n.op === OUTPUT_OP) throw new Error(`${n.id} is a ${n.op}: it belongs to the module around it`);
  const incoming = level.edges.filter((e) => !inside.has(e.source) && inside.has(e.target));
  const outgoing = level.edges.filter((e) => inside.has(e.source) && !inside.has(e.target));
  const loop = feedsBack(level.edges, inside, outgoing);
  if (loop) throw new Error(`the selection would feed itself through ${loop}: select ${loop} too, or less`);

  const innerIds = new Set(picked.map((n) => n.id));
  const at = (id: string) => picked.find((n) => n.id === id)?.position ?? { x: 0, y: 0 };
  const minX = Math.min(...picked.map((n) => n.position.x));
  const maxX = Math.max(...picked.map((n) => n.position.x));
  const minY = Math.min(...picked.map((n) => n.position.y));
  const instance = instanceId(name, taken);

  const state: Record<string, Record<string, unknown>> = {};
  const defNodes: DocNode[] = picked.map((n) => {
    const part = split(n);
    Object.assign(state, part.state);
    return { ...n, params: part.params };
  });
  const defEdges: DocEdge[] = level.edges.filter((e) => inside.has(e.source) && inside.has(e.target));
  const outer: DocEdge[] = level.edges.filter((e) => !inside.has(e.source) && !inside.has(e.target));
  const inputs: string[] = [];
  const outputs: string[] = [];
  const bySource = new Map<string, string>(); // outside source (id:port) -> its input node

  // inputs in the order of the inner ports they feed, top to bottom
  for (const e of [...incoming].sort((a, b) => at(a.target).y - at(b.target).y)) {
    const key = `${e.source}\u0000${e.sourcePort}`;
    let port = bySource.get(key);
    if (!port) {
      port = portId(e.target, e.targetPort, innerIds);
      bySource.set(key, port);
      inputs.push(port);
      defNodes.push({ id: port, op: INPUT_OP, params: {}, position: { x: minX - 240, y: at(e.target).y } });
      outer.push({ ...e, target: instance, targetPort: port });
    }
    defEdges.push({ ...e, source: port, sourcePort: "out" });
  }
  const byInner = new Map<string, string>(); // inner source (id:port) -> its output node
  for (const e of [...outgoing].sort((a, b) => at(a.source).y - at(b.source).y)) {
    const key = `${e.source}\u0000${e.sourcePort}`;
    let port = byInner.get(key);
    if (!port) {
      port = portId(e.source, e.sourcePort, innerIds);
      byInner.set(key, port);
      outputs.push(port);
      defNodes.push({ id: port, op: OUTPUT_OP, params: {}, position: { x: maxX + 240, y: at(e.source).y } });
      defEdges.push({ ...e, target: port, targetPort: "input" });
    }
    outer.push({ ...e, source: instance, sourcePort: port });
  }
  const def: ModuleDef = { name, doc: "", nodes: defNodes, edges: defEdges, inputs, outputs };
  const params = Object.keys(state).length ? { module: name, state } : { module: name };
  const node: DocNode = { id: instance, op: MODULE_OP, params, position: { x: minX, y: minY } };
  const nodes = level.nodes.filter((n) => !inside.has(n.id));
  // the instance takes the place of the first node it replaces (the canvas draws in this order)
  nodes.splice(level.nodes.findIndex((n) => inside.has(n.id)), 0, node);
  return { nodes, edges: outer, def, instance };
}

/** An outside node through which the selection's outputs come back into it (null: none): the
 * instance would then feed itself, a cycle. */
function feedsBack(edges: DocEdge[], inside: Set<string>, outgoing: DocEdge[]): string | null {
  const from = new Map<string, string[]>();
  for (const e of edges) from.set(e.source, [...(from.get(e.source) ?? []), e.target]);
  const seen = new Set<string>();
  const stack = outgoing.map((e) => [e.target, e.target] as [string, string]);
  while (stack.length) {
    const [id, first] = stack.pop()!;
    if (inside.has(id)) return first;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const t of from.get(id) ?? []) stack.push([t, first]);
  }
  return null;
}

/** Puts the nodes of instance `id` back into `level` in its place (ids that clash get fresh
 * ones), with the params it ran with: its `state` and `seed` applied, as flatten does. */
export function unpackModule(level: Level, id: string, modules: ModuleDef[]) {
  const inst = level.nodes.find((n) => n.id === id);
  const def = modules.find((m) => m.name === inst?.params.module);
  if (!inst || !def) throw new Error(`${id} is not an instance of a module this graph defines`);
  const seed = Number(inst.params.seed ?? 0);
  const state = (inst.params.state ?? {}) as Record<string, Record<string, unknown>>;
  const kept = level.edges.filter((e) => e.source !== id && e.target !== id);
  const taken = new Set([...level.nodes.map((n) => n.id), ...kept.map((e) => e.id)]);
  taken.delete(id);
  const rename = new Map<string, string>();
  const fresh = (old: string) => {
    const nid = taken.has(old) ? freshId(`${old.replace(/\d+$/, "")}_`, taken) : old;
    taken.add(nid);
    return nid;
  };
  const ports = new Set([...def.inputs, ...def.outputs]);
  const body = def.nodes.filter((n) => !ports.has(n.id));
  const minX = Math.min(...body.map((n) => n.position.x));
  const minY = Math.min(...body.map((n) => n.position.y));
  const added: DocNode[] = body.map((n) => {
    const nid = fresh(n.id);
    rename.set(n.id, nid);
    let params = { ...n.params, ...(state[n.id] ?? {}) };
    if (n.op === MODULE_OP) {
      const inner: Record<string, unknown> = { ...((params.state as object) ?? {}) };
      for (const [k, v] of Object.entries(state)) if (k.startsWith(n.id + SEP)) inner[k.slice(n.id.length + 1)] = v;
      params = { ...params, ...(Object.keys(inner).length ? { state: inner } : {}) };
      if (seed) params.seed = Number(params.seed ?? 0) + seed;
    } else if (seed && "seed" in params) params.seed = (Number(params.seed) + seed) % 2 ** 31;
    const position = { x: n.position.x - minX + inst.position.x, y: n.position.y - minY + inst.position.y };
    return { ...n, id: nid, params, position };
  });
  // what feeds each input port from outside; what each output node is fed from inside
  const into = new Map(level.edges.filter((e) => e.target === id).map((e) => [e.targetPort, e]));
  const fedBy = new Map(def.edges.filter((e) => def.outputs.includes(e.target)).map((e) => [e.target, e]));
  // the outer end of an inner source: an input port resolves to what is wired into it
  const sourceOf = (e: DocEdge): [string, string] | null => {
    if (!def.inputs.includes(e.source)) return [rename.get(e.source)!, e.sourcePort];
    const feed = into.get(e.source);
    return feed ? [feed.source, feed.sourcePort] : null;
  };
  const edges: DocEdge[] = [...kept];
  const used = new Set(edges.map((e) => e.id));
  const edgeIdFor = (want: string) => {
    const eid = used.has(want) || taken.has(want) ? freshId(`${want}_`, new Set([...taken, ...used])) : want;
    used.add(eid);
    return eid;
  };
  for (const e of def.edges) {
    if (def.outputs.includes(e.target)) continue; // replaced by the edges out of the instance
    const src = sourceOf(e);
    if (!src) continue; // an input nothing was wired into
    const feed = def.inputs.includes(e.source) ? into.get(e.source) : undefined;
    const eid = edgeIdFor(feed && !used.has(feed.id) ? feed.id : e.id);
    edges.push({ ...e, id: eid, source: src[0], sourcePort: src[1], target: rename.get(e.target)! });
  }
  for (const e of level.edges.filter((x) => x.source === id)) {
    const inner = fedBy.get(e.sourcePort);
    const src = inner && sourceOf(inner);
    if (!src) continue;
    edges.push({ ...e, id: edgeIdFor(e.id), source: src[0], sourcePort: src[1] });
  }
  const nodes = level.nodes.flatMap((n) => (n.id === id ? added : [n]));
  return { nodes, edges, added: added.map((n) => n.id) };
}

/** The seed for one more instance of `name` in `nodes`: the next after theirs, so that its
 * randomly initialised parameters differ from each of theirs. */
export function nextSeed(nodes: DocNode[] | OpNode[], name: string) {
  let max = -1;
  for (const n of nodes) {
    const op = "op" in n ? n.op : n.data.op;
    const params = "params" in n ? n.params : n.data.params;
    if (op === MODULE_OP && params.module === name) max = Math.max(max, Number(params.seed ?? 0));
  }
  return max + 1;
}

/** The definition `def` with the nodes and edges a canvas shows of it; its inputs and outputs
 * follow its module_input/module_output nodes (new ones after the others, top to bottom). */
export function levelToDef(def: ModuleDef, nodes: OpNode[], edges: WireEdge[]): ModuleDef {
  const doc = toDocument(nodes, edges, { name: def.name, description: "", target: null, lesson: [], training: null });
  const ports = (op: string, old: string[]) => {
    const now = doc.nodes.filter((n) => n.op === op).sort((a, b) => a.position.y - b.position.y);
    const ids = new Set(now.map((n) => n.id));
    return [...old.filter((i) => ids.has(i)), ...now.map((n) => n.id).filter((i) => !old.includes(i))];
  };
  return { ...def, nodes: doc.nodes, edges: doc.edges, inputs: ports(INPUT_OP, def.inputs), outputs: ports(OUTPUT_OP, def.outputs) };
}

/** The definitions with the levels that are open written back into them, innermost first;
 * returns them with the graph's own nodes and edges (the outermost level). */
export function closeAll(nodes: OpNode[], edges: WireEdge[], meta: DocMeta) {
  let modules = meta.modules ?? [];
  const open = meta.open ?? [];
  for (let i = open.length - 1; i >= 0; i--) {
    const frame = open[i];
    modules = modules.map((m) => (m.name === frame.module ? levelToDef(m, nodes, edges) : m));
    nodes = frame.nodes;
    edges = frame.edges;
  }
  return { nodes, edges, modules };
}

/** The graph's own nodes and edges (what backward can start from), whatever level is shown:
 * a module open on the canvas keeps them in its first frame, unchanged while it is open. */
export function graphLevel<S extends { nodes: OpNode[]; edges: WireEdge[]; meta: DocMeta }>(s: S) {
  const top = s.meta.open?.[0];
  return top ? { nodes: top.nodes, edges: top.edges } : { nodes: s.nodes, edges: s.edges };
}

/** The document of a canvas that may have modules open: the graph with every definition as
 * it is being edited. */
export function composeDocument(nodes: OpNode[], edges: WireEdge[], meta: DocMeta): GraphDocument {
  const top = closeAll(nodes, edges, meta);
  return toDocument(top.nodes, top.edges, { ...meta, modules: top.modules, open: [] });
}
