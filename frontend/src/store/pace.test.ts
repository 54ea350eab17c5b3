import { describe, expect, it } from "vitest";
import { CLASSROOM_PACE, PACES, paceFor, paceLabel, paceReason } from "./pace";

describe("training pace", () => {
  it("is the machine's speed by default, classroom pace when presenting or leading", () => {
    expect(paceFor(undefined, false, false)).toBeNull();
    expect(paceFor(undefined, true, false)).toBe(CLASSROOM_PACE);
    expect(paceFor(undefined, false, true)).toBe(CLASSROOM_PACE);
  });

  it("follows the user's choice over the default, max included", () => {
    expect(paceFor(5, false, false)).toBe(5);
    expect(paceFor(null, true, true)).toBeNull();
    expect(paceFor(100, true, false)).toBe(100);
  });

  it("says why a default pace applies, and nothing once chosen", () => {
    expect(paceReason(undefined, true, false)).toBe("classroom pace while presenting");
    expect(paceReason(undefined, false, true)).toBe("classroom pace while leading a room");
    expect(paceReason(undefined, false, false)).toBeNull();
    expect(paceReason(20, true, false)).toBeNull();
  });

  it("offers max, 100, 20 and 5 steps per second", () => {
    expect(PACES.map(paceLabel)).toEqual(["max", "100 /s", "20 /s (classroom)", "5 /s"]);
  });
});
