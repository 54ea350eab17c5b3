// Reading a param typed into the inspector: the value to store, or the reason it is refused.
// The rules come from the registry's param spec (type, min, max, choices, nullable).
import type { Nested, ParamSpec } from "../api/types";
import { parseLiteral } from "./literals";

export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

const ok = (value: unknown): Parsed => ({ ok: true, value });
const fail = (error: string): Parsed => ({ ok: false, error });

function inRange(spec: ParamSpec, v: number): Parsed {
  if (spec.min !== undefined && v < spec.min) return fail(`must be at least ${spec.min}`);
  if (spec.max !== undefined && v > spec.max) return fail(`must be at most ${spec.max}`);
  return ok(v);
}

const TOO_LARGE = "values must be finite numbers";

/** Why `literal` (a number as typed, which JavaScript read as `v`) cannot be stored, or null.
 * Past float64's range a literal reads as ±Infinity, which JSON would send as null. */
export function tooLarge(literal: string, v: number): string | null {
  return Number.isFinite(v) ? null : `${literal} is too large: ${TOO_LARGE}`;
}

/** A number typed on its own (a float param, a cell of the tensor grid). */
export function parseNumber(text: string): Parsed {
  const t = text.trim();
  if (t === "") return fail("a number is required");
  let v = Number(t);
  if (Number.isNaN(v)) {
    // pasted code: torch.tensor(2.), (0.5)
    const lit = /[[(]/.test(t) ? parseLiteral(t) : null;
    if (lit?.ok && typeof lit.value === "number") v = lit.value;
    else if (lit?.ok) return fail(`'${t}' holds several values: this field takes one number`);
    else return fail(lit ? lit.error : `'${t}' is not a number`);
  }
  // "Infinity" is a word, not a literal too large: say it as for other words
  if (!/\d/.test(t)) return fail(`'${t}' is not a number: ${TOO_LARGE}`);
  const big = tooLarge(t, v);
  return big ? fail(big) : ok(v);
}

/** A whole number typed as digits: too many of them and it is no longer exact (or finite). */
function wholeNumber(p: string): Parsed {
  const v = Number(p);
  if (!Number.isSafeInteger(v)) return fail(`${p} is too large: whole numbers must be within ±${Number.MAX_SAFE_INTEGER}`);
  return ok(v);
}

function intList(text: string, what: string, allowNegative: boolean): Parsed {
  const parts = text
    .replace(/^[[(]|[\])]$/g, "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const out: number[] = [];
  for (const p of parts) {
    if (!/^-?\d+$/.test(p)) return fail(`${what}: '${p}' is not a whole number`);
    const n = wholeNumber(p);
    if (!n.ok) return fail(`${what}: ${n.error}`);
    const v = n.value as number;
    if (!allowNegative && v < 0) return fail(`${what}: sizes cannot be negative (${v})`);
    out.push(v);
  }
  return ok(out);
}

/** Parse what the user typed for `spec` (text fields; bools and choices come typed). */
export function parseParam(spec: ParamSpec, text: string): Parsed {
  const t = text.trim();
  if (t === "" && spec.nullable) return ok(null);
  switch (spec.type) {
    case "float": {
      const r = parseNumber(t);
      return r.ok ? inRange(spec, r.value as number) : r;
    }
    case "int": {
      if (!/^-?\d+$/.test(t)) return fail(`'${t}' is not a whole number`);
      const r = wholeNumber(t);
      return r.ok ? inRange(spec, r.value as number) : r;
    }
    case "dims": {
      if (t === "") return fail("a dim is required");
      const r = intList(t, "dims", true);
      if (!r.ok) return r;
      const dims = r.value as number[];
      if (new Set(dims).size !== dims.length) return fail("a dim appears twice");
      // one dim is stored as a number, several as a list: as dim=1 and dim=(0, 1) in PyTorch
      return ok(dims.length === 1 && !/[,[(]/.test(t) ? dims[0] : dims);
    }
    case "shape": {
      const r = intList(t, "shape", true);
      if (!r.ok) return r;
      const dims = r.value as number[];
      if (dims.filter((d) => d === -1).length > 1) return fail("only one dimension can be -1");
      if (dims.some((d) => d < -1)) return fail("sizes cannot be negative");
      return ok(dims);
    }
    case "tensor":
      return parseTensor(t);
    case "bool":
      return t === "true" || t === "false" ? ok(t === "true") : fail("must be true or false");
    case "choice": {
      const found = (spec.choices ?? []).find((c) => String(c) === t);
      return found !== undefined
        ? ok(found)
        : fail(`must be one of ${(spec.choices ?? []).join(", ")}`);
    }
    default: {
      const limit = spec.max_length ?? 200;
      if (text.length > limit) return fail(`at most ${limit.toLocaleString("en")} characters`);
      return ok(limit > 200 ? text : t); // long texts (files) keep their whitespace
    }
  }
}

/** A tensor literal: a number or rectangular nested lists of numbers, written as JSON or as
 * PyTorch code writes it (`[2., 3.]`, `1e-3`, `torch.tensor([...])`; doc/literals.ts). */
export function parseTensor(text: string): Parsed {
  const t = text.trim();
  if (t === "") return fail("a value is required");
  const r = parseLiteral(t);
  if (!r.ok) return fail(r.error);
  const shape = shapeOf(r.value);
  if (typeof shape === "string") return fail(shape);
  return ok(r.value);
}

/** The shape of nested lists, or why they are not a tensor (as PyTorch says it). */
export function shapeOf(v: unknown): number[] | string {
  if (typeof v === "number" || typeof v === "boolean") return [];
  if (!Array.isArray(v)) return "values must be numbers";
  if (v.length === 0) return [0];
  const inner = v.map(shapeOf);
  const first = inner[0];
  if (typeof first === "string") return first;
  for (let i = 0; i < inner.length; i++) {
    const s = inner[i];
    if (typeof s === "string") return s;
    if (s.length !== first.length || s.some((d, j) => d !== first[j]))
      return `expected sequence of length ${first[0] ?? 0} at dim 1 (got ${s[0] ?? 0})`;
  }
  return [v.length, ...first];
}

/** How a stored param value is written in its text field. */
export function formatParam(spec: ParamSpec, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (spec.type === "shape" || spec.type === "dims")
    return Array.isArray(value) ? value.join(", ") : String(value);
  if (spec.type === "tensor") return JSON.stringify(value as Nested);
  return String(value);
}
