import { describe, expect, it } from "vitest";
import { levelOfDetail, MAX_FONT, PRESENTER_PX } from "./detail";

describe("level of detail", () => {
  it("draws everything zoomed in, and nothing far out", () => {
    expect(levelOfDetail(1, false).detail).toBe("full");
    expect(levelOfDetail(0.45, false).detail).toBe("full");
    expect(levelOfDetail(0.1, false).detail).toBe("none");
  });

  it("keeps name and value legible in between: the font grows as the zoom shrinks", () => {
    const a = levelOfDetail(0.4, false);
    const b = levelOfDetail(0.34, false);
    expect(a.detail).toBe("compact");
    expect(b.font).toBeGreaterThan(a.font);
    // at a fit view of 50 nodes (about 0.34 on a 1500x950 page) the text is 10 px on screen
    expect(b.font * 0.34).toBeGreaterThanOrEqual(10);
  });

  it("asks for 16 px on screen when presenting", () => {
    const p = levelOfDetail(0.7, true);
    expect(p.detail).toBe("compact");
    expect(p.font * 0.7).toBeGreaterThanOrEqual(PRESENTER_PX);
    expect(levelOfDetail(1.4, true).detail).toBe("full");
    // never past what fits a node
    expect(levelOfDetail(0.3, true).font).toBe(MAX_FONT);
  });
});
