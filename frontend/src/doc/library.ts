// Where a definition from the module library goes in a document (the pure part of
// store/library.ts): an identical definition the document has already is used again, else the
// new one takes the first free name of ConvBlock, ConvBlock2, ConvBlock3, ...
import type { ModuleDef } from "../api/types";

/** What a definition computes, as text: its nodes (ids, ops, params, labels), edges, inputs
 * and outputs. Its name, doc and where its nodes stand on the canvas are left out: moving a
 * node does not make another module. */
export function definitionKey(def: ModuleDef): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
        )
        : v;
  const byId = <T extends { id: string }>(xs: T[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return JSON.stringify({
    nodes: byId(def.nodes).map((n) => sorted({ id: n.id, op: n.op, params: n.params ?? {}, label: n.label ?? null })),
    edges: byId(def.edges).map((e) => sorted({ ...e })),
    inputs: def.inputs,
    outputs: def.outputs,
  });
}

/** The first of `base`, `base2`, `base3`, ... that no module in `modules` is named. */
export function freeModuleName(base: string, modules: ModuleDef[]): string {
  const taken = new Set(modules.map((m) => m.name));
  if (!taken.has(base)) return base;
  let i = 2;
  while (taken.has(`${base}${i}`)) i++;
  return `${base}${i}`;
}

/** How `def` joins `modules`: `reused` names the identical definition already there (and
 * `modules` is unchanged), else `def` is added under a free name. */
export function placeDefinition(def: ModuleDef, modules: ModuleDef[]): { name: string; modules: ModuleDef[]; reused: boolean } {
  const key = definitionKey(def);
  const same = modules.find((m) => definitionKey(m) === key);
  if (same) return { name: same.name, modules, reused: true };
  const name = freeModuleName(def.name, modules);
  return { name, modules: [...modules, { ...def, name }], reused: false };
}
