// The loss chart's y axis. A training's loss falls by orders of magnitude, so on a linear axis
// its tail is a flat line on 0 and the ticks read "0", "0". A log axis (powers of ten, with
// 2 and 5 between them when the range is short) keeps the tail readable; it needs every loss
// above 0, so a loss that reaches 0 or goes negative (some losses can) keeps the linear axis.
import { formatNumber } from "../format/annotate";

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
