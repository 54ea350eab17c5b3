import { describe, expect, it } from "vitest";
import { chartData } from "./chartData";

describe("the training chart's data", () => {
  it("is the loss alone without an accuracy", () => {
    expect(chartData([1, 2], [0.5, 0.25], null)).toEqual([
      [1, 2],
      [0.5, 0.25],
    ]);
  });

  it("lays the snapshots' accuracies (in percent) on the loss's steps", () => {
    const [xs, loss, acc] = chartData([1, 2, 3, 4], [2, 1, 0.5, 0.25], { steps: [2, 4], values: [0.5, 0.875] });
    expect(xs).toEqual([1, 2, 3, 4]);
    expect(loss).toEqual([2, 1, 0.5, 0.25]);
    expect(acc).toEqual([null, 50, null, 87.5]);
  });

  it("adds a step only a snapshot has (its loss not arrived yet, or downsampled away)", () => {
    const [xs, loss, acc] = chartData([1, 3], [2, 1], { steps: [2, 5], values: [0.25, 1] });
    expect(xs).toEqual([1, 2, 3, 5]);
    expect(loss).toEqual([2, null, 1, null]);
    expect(acc).toEqual([null, 25, null, 100]);
  });
});
