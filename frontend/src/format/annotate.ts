// How values and gradients are written on the canvas: short enough for an edge label, exact
// enough to check the teaching texts' numbers (25, 10, 0.3333).
import type { Nested, Summary } from "../api/types";

/** A number in at most 4 significant digits, without trailing zeros: 25, 0.3333, 1.2e-7. */
export function formatNumber(v: number | boolean | string): string {
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "string") return v; // "nan", "inf", "-inf" as the server spells them
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  if (v === 0) return Object.is(v, -0) ? "-0" : "0";
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-4) {
    const [m, e] = v.toExponential(3).split("e");
    return `${trimZeros(m)}e${e.replace("+", "")}`;
  }
  return trimZeros(v.toPrecision(4));
}

function trimZeros(s: string) {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

export function formatShape(shape: number[]): string {
  return shape.length === 0 ? "scalar" : shape.join("×");
}

/** Nested values written like a tensor: [[1, 2], [3, 4]]. */
export function formatNested(v: Nested): string {
  return Array.isArray(v) ? `[${v.map(formatNested).join(", ")}]` : formatNumber(v);
}

/** The one-line annotation of a value or gradient: the number for a scalar, the values for a
 * tensor of up to `maxInline` elements, else its shape and mean. */
export function formatSummary(s: Summary, maxInline = 6): string {
  if (s.numel === 1 && s.preview !== undefined && s.preview !== null) {
    let v: Nested = s.preview;
    while (Array.isArray(v)) v = v[0];
    return s.shape.length === 0 ? formatNumber(v) : `${formatNested(s.preview)}`;
  }
  if (s.numel <= maxInline && s.preview !== undefined && s.preview !== null)
    return formatNested(s.preview);
  const mean = s.stats ? ` μ ${formatNumber(s.stats.mean)}` : "";
  const bad = s.nan ? ` ⚠ ${s.nan} nan` : s.inf ? ` ⚠ ${s.inf} inf` : "";
  return `${formatShape(s.shape)}${mean}${bad}`;
}

/** A value in a few characters, for a node drawn in large type (canvas/detail.ts): the
 * numbers of up to 3 elements, else the mean (the shape is on the node's port). */
export function formatCompact(s: Summary): string {
  if (s.numel <= 3) return formatSummary(s, 3);
  const bad = s.nan ? " ⚠ nan" : s.inf ? " ⚠ inf" : "";
  return s.stats ? `μ ${formatNumber(s.stats.mean)}${bad}` : formatShape(s.shape);
}

/** The summary's value as one number when it holds exactly one, else null. */
export function scalarOf(s: Summary | undefined): number | null {
  if (!s || s.numel !== 1 || s.preview === undefined || s.preview === null) return null;
  let v: Nested = s.preview;
  while (Array.isArray(v)) v = v[0];
  return typeof v === "string" ? Number(v.replace("inf", "Infinity")) : Number(v);
}
