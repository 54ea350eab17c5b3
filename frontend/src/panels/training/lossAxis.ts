// The loss chart's y axis. A training's loss falls by orders of magnitude, so on a linear axis
// its tail is a flat line on 0 and the ticks read "0", "0". A log axis (powers of ten, with
// 2 and 5 between them when the range is short) keeps the tail readable; it needs every loss
// above 0, so a loss that reaches 0 or goes negative (some losses can) keeps the linear axis.
import { formatNumber } from "../../format/annotate";

export type LossScale = "log" | "linear";

export function lossScale(losses: ArrayLike<number>): LossScale {
  if (losses.length < 2) return "linear";
  for (let i = 0; i < losses.length; i++) if (!(losses[i] > 0) || !Number.isFinite(losses[i])) return "linear";
  return "log";
}

/** Tick labels: each one distinct and short (0.001, 2e-5, 10), never a row of zeros. */
export function tickLabels(splits: number[]): string[] {
  return splits.map((v) => (v == null ? "" : formatNumber(v)));
}

/** Where a log axis puts its ticks between min and max: the powers of ten, and 2 and 5 times
 * them when that leaves fewer than three (a loss from 0.3 to 0.9 would otherwise show no tick,
 * or "1" alone); every step of the decade when even those are too few. */
export function logSplits(min: number, max: number): number[] {
  if (!(min > 0) || !(max >= min)) return [];
  const lo = Math.floor(Math.log10(min));
  const hi = Math.ceil(Math.log10(max));
  const pick = (mantissas: number[]) => {
    const out: number[] = [];
    for (let k = lo; k <= hi; k++) {
      for (const m of mantissas) {
        const v = m * 10 ** k;
        if (v >= min * (1 - 1e-9) && v <= max * (1 + 1e-9)) out.push(Number(v.toPrecision(12)));
      }
    }
    return out;
  };
  for (const mantissas of [[1], [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
    const ticks = pick(mantissas);
    if (ticks.length >= 3) return ticks;
  }
  return pick([1, 2, 3, 4, 5, 6, 7, 8, 9]);
}


/** Which of a log axis's ticks get a label, where `pos` are their places on screen (px): no
 * two labels closer than `gap`. The roundest win — powers of ten, then 5, then 2, then the
 * other digits — so a short chart of a loss from 0.3 to 1 reads "1, 0.5, 0.3", not eight
 * labels on top of each other. Dropped ticks are null (uPlot draws no label there). */
export function spacedTicks(splits: number[], pos: number[], gap: number): (number | null)[] {
  const rank = (v: number) => {
    const m = Math.round(v / 10 ** Math.floor(Math.log10(v) + 1e-9));
    return m === 1 ? 0 : m === 5 ? 1 : m === 2 ? 2 : 3;
  };
  const order = splits.map((_, i) => i).sort((a, b) => rank(splits[a]) - rank(splits[b]) || a - b);
  const kept: number[] = [];
  for (const i of order) if (kept.every((k) => Math.abs(pos[k] - pos[i]) >= gap)) kept.push(i);
  const keep = new Set(kept);
  return splits.map((v, i) => (keep.has(i) ? v : null));
}
