import { describe, expect, it } from "vitest";
import { EDITOR_PX, legibleDownTo, levelOfDetail, MAX_FONT, PRESENTER_PX } from "./detail";

const onScreen = (zoom: number, presenter = false) => {
  const l = levelOfDetail(zoom, presenter);
  return (l.detail === "full" ? 12 : l.font) * zoom;
};

describe("level of detail", () => {
  it("draws everything zoomed in, and nothing far out", () => {
    expect(levelOfDetail(1, false).detail).toBe("full");
    expect(levelOfDetail(0.92, false).detail).toBe("full");
    expect(levelOfDetail(0.1, false).detail).toBe("none");
  });

  it("keeps name and value at 11 px or more on screen from zoom 1.25 to a fit view of 50 nodes", () => {
    // 0.57: the fit view of a 13-node template, where the full 12 px text would be 7 px
    const fit13 = levelOfDetail(0.57, false);
    expect(fit13.detail).toBe("compact");
    expect(fit13.font * 0.57).toBeGreaterThanOrEqual(EDITOR_PX);
    // every zoom from 1.25 down to 0.31 (50 nodes fitted on a 1500x950 page: 0.317)
    for (let z = 1.25; z >= 0.31; z -= 0.005) expect(onScreen(z)).toBeGreaterThanOrEqual(EDITOR_PX);
    expect(legibleDownTo(EDITOR_PX)).toBeLessThan(0.31);
  });

  it("the font grows as the zoom shrinks, up to what fits a node", () => {
    expect(levelOfDetail(0.4, false).font).toBeGreaterThan(levelOfDetail(0.6, false).font);
    expect(levelOfDetail(0.25, false).font).toBe(MAX_FONT);
  });

  it("drops the gradient's line when name and value need the whole node", () => {
    expect(levelOfDetail(0.57, false).grads).toBe(true);
    expect(levelOfDetail(0.32, false).grads).toBe(false);
  });

  it("keeps the handles wireable while they are big enough to hit", () => {
    expect(levelOfDetail(0.57, false).wiring).toBe(true);
    expect(levelOfDetail(0.3, false).wiring).toBe(false);
  });

  it("asks for 16 px on screen when presenting", () => {
    const p = levelOfDetail(0.7, true);
    expect(p.detail).toBe("compact");
    expect(p.font * 0.7).toBeGreaterThanOrEqual(PRESENTER_PX);
    expect(levelOfDetail(1.4, true).detail).toBe("full");
    expect(levelOfDetail(0.3, true).font).toBe(MAX_FONT);
  });

  it("presenting, draws no face larger than the nodes are sized for, gradient included", () => {
    const capped = levelOfDetail(0.4, true, 32); // 16 px would need 40
    expect(capped.font).toBe(32);
    expect(capped.grads).toBe(true); // the node keeps the gradient's line at 32 px
    expect(levelOfDetail(0.7, true, 32).font).toBe(23); // below the cap: 16 px on screen
  });
});
