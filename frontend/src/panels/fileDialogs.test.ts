// The store's times are Unix seconds (backend/server/store.py writes time.time()).
import { describe, expect, it } from "vitest";
import { savedAt } from "./FileDialogs";

describe("saved graph dates", () => {
  it("reads the server's seconds as seconds, not milliseconds", () => {
    const seconds = 1795560697.6; // as GET /api/graphs gives it
    const shown = savedAt(seconds, "en-US");
    expect(shown).toBe(new Date(1795560697600).toLocaleString("en-US"));
    expect(shown).toContain("2026");
    expect(shown).not.toContain("1970");
  });
  it("keeps the time of day to the second", () => {
    const ms = Date.UTC(2025, 0, 2, 3, 4, 5);
    expect(savedAt(ms / 1000, "en-US")).toBe(new Date(ms).toLocaleString("en-US"));
  });
});
