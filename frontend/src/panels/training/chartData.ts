// The training chart's data on one step axis: uPlot draws series over one shared x array, and
// the accuracy is known only at the snapshots (every 250 ms), the loss at every step.
import type uPlot from "uplot";

/** Steps, losses, and accuracies in percent where `accuracy` reports one (null elsewhere; the
 * chart joins its points over the gaps). Without `accuracy`: steps and losses as they are. */
export function chartData(
  steps: number[],
  losses: number[],
  accuracy: { steps: number[]; values: number[] } | null,
): uPlot.AlignedData {
  if (!accuracy) return [steps, losses];
  const xs: number[] = [];
  const loss: (number | null)[] = [];
  const acc: (number | null)[] = [];
  // both step lists ascend: one merge
  let i = 0;
  let j = 0;
  while (i < steps.length || j < accuracy.steps.length) {
    const a = i < steps.length ? steps[i] : Infinity;
    const b = j < accuracy.steps.length ? accuracy.steps[j] : Infinity;
    const x = Math.min(a, b);
    xs.push(x);
    loss.push(a === x ? losses[i++] : null);
    acc.push(b === x ? accuracy.values[j++] * 100 : null);
  }
  return [xs, loss, acc];
}
