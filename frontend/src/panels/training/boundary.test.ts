import { describe, expect, it } from "vitest";
import { colourScale } from "./BoundaryView";

describe("decision boundary colours", () => {
  it("centres probabilities on 0.5", () => {
    const scale = colourScale([[0, 0.25], [0.5, 1]]);
    expect([scale(0), scale(0.25), scale(0.5), scale(1)]).toEqual([-1, -0.5, 0, 1]);
  });
  it("centres other outputs on 0, scaled by the largest magnitude", () => {
    const scale = colourScale([[-4, 2]]);
    expect([scale(-4), scale(0), scale(2)]).toEqual([-1, 0, 0.5]);
  });
});
