import { describe, expect, it } from "vitest";
import { type Measure, nameParts, wrappedLines } from "./textWrap";

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

  it("breaks a name after its underscores before it breaks it mid-word", () => {
    const names = (text: string) => [{ text, font: "12px monospace", names: true }];
    expect(nameParts("binary_cross_entropy")).toEqual(["binary_", "cross_", "entropy"]);
    expect(nameParts("__init__")).toEqual(["__", "init__"]);
    expect(nameParts("relu")).toEqual(["relu"]);
    // a line of 10: "binary_" | "cross_" | "entropy", each piece whole
    expect(wrappedLines(names("binary_cross_entropy"), 100, mono)).toBe(3);
    // a line of 8: "x = ab_" | "cdefgh"; without the names' breaks, "x = " | "ab_cdefg" | "h"
    expect(wrappedLines(names("x = ab_cdefgh"), 80, mono)).toBe(2);
    expect(wrappedLines(run("x = ab_cdefgh"), 80, mono)).toBe(3);
    // a piece longer than a line still breaks anywhere: "abcdefgh" | "ij_k"
    expect(wrappedLines(names("abcdefghij_k"), 80, mono)).toBe(2);
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
