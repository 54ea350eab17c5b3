import { describe, expect, it } from "vitest";
import { logSplits, lossScale, spacedTicks, tickLabels } from "./lossAxis";

describe("the loss axis", () => {
  it("is logarithmic while every loss is above zero", () => {
    expect(lossScale([2.3, 0.5, 1e-4])).toBe("log");
    expect(lossScale(new Float64Array([1, 0.1]))).toBe("log");
  });

  it("stays linear for a loss that reaches zero or goes negative, or a lone point", () => {
    expect(lossScale([1, 0])).toBe("linear");
    expect(lossScale([1, -0.5])).toBe("linear");
    expect(lossScale([1, Number.NaN])).toBe("linear");
    expect(lossScale([1])).toBe("linear");
  });

  it("labels small ticks with their digits, not as zeros", () => {
    const labels = tickLabels([1e-5, 1e-4, 0.001, 0.01, 0.1, 1]);
    expect(new Set(labels).size).toBe(6);
    expect(labels).toEqual(["1e-5", "0.0001", "0.001", "0.01", "0.1", "1"]);
  });

  it("puts at least three ticks on a log axis, whatever the range", () => {
    expect(logSplits(1e-5, 2)).toEqual([1e-5, 1e-4, 0.001, 0.01, 0.1, 1]);
    expect(logSplits(0.05, 0.6)).toEqual([0.05, 0.1, 0.2, 0.5]);
    expect(logSplits(0.29, 0.95)).toEqual([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
    expect(logSplits(0, 1)).toEqual([]);
  });

  it("labels the roundest ticks that fit, never two closer than the gap", () => {
    const splits = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
    // a 100 px tall log axis from 0.3 (y=100) to 1 (y=0): 0.9 and 1 are 9 px apart
    const pos = splits.map((v) => (100 * Math.log(1 / v)) / Math.log(1 / 0.3));
    const shown = spacedTicks(splits, pos, 14);
    expect(shown).toEqual([0.3, 0.4, 0.5, 0.6, null, 0.8, null, 1]);
    const kept = pos.filter((_, i) => shown[i] !== null);
    for (let i = 1; i < kept.length; i++) expect(Math.abs(kept[i] - kept[i - 1])).toBeGreaterThanOrEqual(14);
    // room for all: all of them
    expect(spacedTicks([0.01, 0.1, 1], [100, 50, 0], 14)).toEqual([0.01, 0.1, 1]);
  });
});
