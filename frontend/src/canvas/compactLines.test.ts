import { describe, expect, it } from "vitest";
import { compactHeight, EDITOR_TYPE, lineFont, numberLines, reservedLines } from "./nodeSize";
import type { Measure } from "./textWrap";

// every glyph 0.6 em wide; a node's text is 162 px wide
const em: Measure = (text, font) => text.length * 0.6 * Number(/(\d+)px/.exec(font)![1]);
const fits = (text: string, size: number) =>
  text.split(" ").every((w) => em(w, `400 ${size}px x`) <= 162);

describe("a large face's value and gradient lines", () => {
  it("keeps the lines the widest mean needs: wrapped at a space, the number whole", () => {
    // 22 px: 13.2 px a glyph, 12 a line; "μ -0.0001234" is 12, "∇ μ -0.0001234" 14
    expect(reservedLines(EDITOR_TYPE, em)).toEqual({ value: 1, grad: 2 });
    // 13 px: 7.8 px a glyph, 20 a line: both on one line
    expect(reservedLines({ font: 13, weight: 600, width: 180 }, em)).toEqual({ value: 1, grad: 1 });
    // and the node keeps them under its face: one line of face, 1 + 2 lines of numbers
    expect(compactHeight({ face: "a = x + y", name: "a" }, em)).toBe(2 + 2 + 27 + 3 * 22);
  });

  it("draws a line that fits its lines in the face's font", () => {
    expect(lineFont("μ 0.25", 1, EDITOR_TYPE, em)).toBe(22);
    expect(lineFont("∇ μ -0.0001234", 2, EDITOR_TYPE, em)).toBe(22);
    expect(numberLines("∇ μ -0.0001234", EDITOR_TYPE, em)).toBe(2);
  });

  it("draws a longer one smaller, in the largest font that fits it with every number whole", () => {
    const three = "[-0.1235, -0.5678, 0.9012]"; // 26 glyphs: three lines at 22 px
    expect(numberLines(three, EDITOR_TYPE, em)).toBe(3);
    const size = lineFont(three, 1, EDITOR_TYPE, em);
    expect(size).toBeLessThan(22);
    expect(numberLines(three, { ...EDITOR_TYPE, font: size }, em)).toBe(1);
    expect(numberLines(three, { ...EDITOR_TYPE, font: size + 1 }, em)).toBe(2); // the largest
    // a number wider than the node at the face's font: smaller until it fits whole
    const wide = lineFont("-0.0001234", 2, { font: 30, weight: 400, width: 180 }, em); // 18 px a glyph: 180
    expect(fits("-0.0001234", wide) && !fits("-0.0001234", wide + 1)).toBe(true);
  });
});
