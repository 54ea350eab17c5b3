// How many lines a text takes when the browser wraps it in a box of a given width, known
// before it is drawn: node sizes (nodeSize.ts) are given to React Flow up front, so a face
// that wraps must be counted, not measured after. The model is CSS's `white-space: normal;
// overflow-wrap: anywhere`: lines break at spaces (and, in a face's names, after underscores,
// where the face renders a <wbr>: Breakable.tsx), and a word longer than a line breaks
// anywhere. Widths come from a canvas's measureText in the page's own fonts; without a
// canvas (the unit tests) from an average glyph of 0.6 em, a monospace font's advance.

/** Width in px of `text` drawn in `font` (a CSS font shorthand). */
export type Measure = (text: string, font: string) => number;

/** A piece of text in one font: a face's bold name, then its op in regular weight. `names`:
 * it may also break after an underscore (`binary_cross_` | `entropy`), not mid-word. */
export interface Run {
  text: string;
  font: string;
  names?: boolean;
}

/** A name's pieces, each ending at a run of underscores: where a face may go to its next line
 * (`nameParts("binary_cross_entropy")` is `["binary_", "cross_", "entropy"]`). */
export function nameParts(text: string): string[] {
  return text.split(/(?<=_)(?=[^_])/);
}

// a cache of the page's fonts' widths: the context only measures (made once, null without a
// canvas), and a text's width in a font never changes
let context: CanvasRenderingContext2D | null | undefined;
const widths = new Map<string, number>();

function fontSize(font: string): number {
  const m = /(\d+(?:\.\d+)?)px/.exec(font);
  return m ? Number(m[1]) : 12;
}

/** The page's measure (memoised: a graph's faces share their words). */
export const measureText: Measure = (text, font) => {
  const key = `${font}\u0000${text}`;
  let w = widths.get(key);
  if (w !== undefined) return w;
  if (context === undefined)
    context = typeof document === "undefined" ? null : (document.createElement("canvas").getContext("2d") ?? null);
  if (context) {
    context.font = font;
    w = context.measureText(text).width;
  } else w = text.length * 0.6 * fontSize(font);
  if (widths.size > 50_000) widths.clear();
  widths.set(key, w);
  return w;
};

/** The lines `runs` wrap to in `width` px (at least 1). */
export function wrappedLines(runs: Run[], width: number, measure: Measure = measureText): number {
  // words with the spaces after them, each in its run's font (a face's name holds no space,
  // so no word spans two runs); in names, a word's pieces after its underscores
  const words: { text: string; font: string }[] = [];
  for (const r of runs)
    for (const w of r.text.match(/[^ ]+ *| +/g) ?? []) {
      if (!r.names) words.push({ text: w, font: r.font });
      else for (const piece of nameParts(w)) words.push({ text: piece, font: r.font });
    }
  let lines = 1;
  let x = 0;
  for (const { text, font } of words) {
    const ink = text.trimEnd();
    const inkWidth = measure(ink, font);
    const full = ink === text ? inkWidth : measure(text, font);
    if (x + inkWidth <= width) {
      x += full;
      continue;
    }
    if (x > 0) {
      lines++;
      x = 0;
    }
    if (inkWidth <= width) {
      x = full;
      continue;
    }
    // longer than a line: broken anywhere, letter by letter
    for (const ch of ink) {
      const w = measure(ch, font);
      if (x + w > width && x > 0) {
        lines++;
        x = 0;
      }
      x += w;
    }
    x += full - inkWidth; // its trailing spaces (they hang at a line's end)
  }
  return lines;
}
