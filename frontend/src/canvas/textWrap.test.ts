import { describe, expect, it } from "vitest";
import { type Measure, wrappedLines } from "./textWrap";

// every character 10 px wide: a line of 100 px holds 10
const mono: Measure = (text) => text.length * 10;
const run = (text: string) => [{ text, font: "12px monospace" }];

describe("wrapped lines", () => {
  it("is one line for a text that fits, or for none", () => {
    expect(wrappedLines(run("a = x + y"), 100, mono)).toBe(1);
    expect(wrappedLines(run(""), 100, mono)).toBe(1);
    expect(wrappedLines(run("0123456789"), 100, mono)).toBe(1); // exactly full
  });

  it("breaks at spaces, a trailing space hanging at the line's end", () => {
    // "relu1 = " + "relu(conv1)" : "relu1 = " is 8, "relu(conv1)" 11 > 10 - 8: next lines
    expect(wrappedLines(run("relu1 = relu(conv1)"), 100, mono)).toBe(3);
    expect(wrappedLines(run("abcd efgh ijkl"), 100, mono)).toBe(2); // "abcd efgh " | "ijkl"
    expect(wrappedLines(run("abcd efghi"), 100, mono)).toBe(1); // the space before the end fits
  });

  it("breaks a word longer than a line anywhere", () => {
    expect(wrappedLines(run("x = " + "a".repeat(25)), 100, mono)).toBe(4); // "x = " | 10 | 10 | 5
  });

  it("measures each run in its own font", () => {
    const wide: Measure = (text, font) => text.length * (font.startsWith("700") ? 20 : 10);
    const runs = [
      { text: "embed", font: "700 22px sans-serif" },
      { text: " = emb(x)", font: "400 22px sans-serif" },
    ];
    // "embed" 100 px fills the first line; " = emb(x)" goes to the second
    expect(wrappedLines(runs, 100, wide)).toBe(2);
    expect(wrappedLines(runs, 200, wide)).toBe(1);
  });
});
