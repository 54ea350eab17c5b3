import { describe, expect, it } from "vitest";
import { parseTrainingValue } from "./TrainingPanel";

const refused = (key: Parameters<typeof parseTrainingValue>[0], raw: string) => {
  const r = parseTrainingValue(key, raw);
  return r.ok ? `accepted ${r.value}` : r.error;
};

describe("training settings fields", () => {
  it("refuse what TrainingSettings refuses, with the reason", () => {
    expect(refused("lr", "-1")).toBe("the learning rate must be greater than 0");
    expect(refused("lr", "0")).toBe("the learning rate must be greater than 0");
    expect(refused("lr", "11")).toBe("the learning rate must be at most 10");
    expect(refused("lr", "abc")).toBe("the learning rate must be a number");
    expect(refused("momentum", "1")).toBe("momentum must be less than 1");
    expect(refused("momentum", "-0.1")).toBe("momentum must be at least 0");
    expect(refused("steps", "0")).toBe("steps must be at least 1");
    expect(refused("steps", "-5")).toBe("steps must be at least 1");
    expect(refused("steps", "2.5")).toBe("steps must be a whole number");
    expect(refused("steps", "100001")).toBe("steps must be at most 100,000");
    expect(refused("steps", "")).toBe("steps must be a number");
    expect(refused("batch_size", "-3")).toBe("the batch size must be at least 0");
    expect(refused("batch_size", "1.5")).toBe("the batch size must be a whole number");
  });

  it("accept the bounds themselves and ordinary values", () => {
    expect(parseTrainingValue("lr", "10")).toEqual({ ok: true, value: 10 });
    expect(parseTrainingValue("lr", " 1e-6 ")).toEqual({ ok: true, value: 1e-6 });
    expect(parseTrainingValue("momentum", "0")).toEqual({ ok: true, value: 0 });
    expect(parseTrainingValue("momentum", "0.99")).toEqual({ ok: true, value: 0.99 });
    expect(parseTrainingValue("steps", "1")).toEqual({ ok: true, value: 1 });
    expect(parseTrainingValue("steps", "100000")).toEqual({ ok: true, value: 100000 });
    expect(parseTrainingValue("batch_size", "0")).toEqual({ ok: true, value: 0 });
  });
});
