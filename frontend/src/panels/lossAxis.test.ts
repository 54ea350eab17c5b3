import { describe, expect, it } from "vitest";
import { logSplits, lossScale, tickLabels } from "./lossAxis";

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
});
