// No import circles in the page's source (docs/architecture.md, "The editor"): a module that
// imports itself round a circle is evaluated half-made, and a store or panel in one cannot be
// read on its own. Every relative import counts, `import type` too: a circle of types is a
// circle of meaning, and it turns into a runtime one the day a value is imported along it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = import.meta.dirname;
const CODE = /\.(ts|tsx)$/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return CODE.test(name) ? [path] : [];
  });
}

// `import … from "x"`, `import "x"`, `export … from "x"`, `import("x")` (lazy panels too)
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

function resolveImport(from: string, spec: string, known: Set<string>): string | null {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")])
    if (known.has(candidate)) return candidate;
  return null; // a stylesheet or a JSON file: no module of ours
}

export function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = new Set<string>();
    for (const m of text.matchAll(SPECIFIER)) {
      const target = resolveImport(file, m[1], known);
      if (target) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** Every circle found by a depth-first search, each as the path round it. */
export function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe("imports", () => {
  it("finds a circle where there is one", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(circles(graph)).toEqual([["a", "b", "c", "a"]]);
  });

  it("form no circle in src/", () => {
    const files = sources(SRC);
    const graph = importGraph(files);
    // (the check reads the imports: a file with none found would make it pass by mistake)
    expect([...graph.values()].filter((targets) => targets.length).length).toBeGreaterThan(50);
    const found = circles(graph).map((c) => c.map((f) => relative(SRC, f)).join(" → "));
    expect(found).toEqual([]);
  });
});
