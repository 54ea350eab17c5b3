import { describe, expect, it } from "vitest";
import {
  colourAt,
  gridPage,
  imageDims,
  imagesByDefault,
  MAX_COLS,
  MAX_ROWS,
  mapPixels,
  NAN_COLOUR,
  neighbours,
  scaleOf,
  scaleOfPage,
  WINDOW_LIMITS,
  zoomOf,
} from "./imageGrid";

const PAGE = 262_144;

describe("which tensors are images", () => {
  it("reads (N, C, H, W) and (C, H, W), nothing else", () => {
    expect(imageDims([5, 3, 8, 8])).toEqual({ n: 5, c: 3, h: 8, w: 8 });
    expect(imageDims([3, 8, 8])).toEqual({ n: 1, c: 3, h: 8, w: 8 });
    expect(imageDims([8, 8])).toBeNull();
    expect(imageDims([2, 2, 2, 2, 2])).toBeNull();
    expect(imageDims([2, 3, 0, 4])).toBeNull();
  });

  it("opens a 4-D batch of maps at least 4x4 as images", () => {
    expect(imagesByDefault([1797, 1, 8, 8])).toBe(true);
    expect(imagesByDefault([2, 6, 4, 4])).toBe(true);
    expect(imagesByDefault([2, 6, 3, 8])).toBe(false); // too thin to be a picture
    expect(imagesByDefault([6, 8, 8])).toBe(false); // 3-D: offered, not the default
    expect(imagesByDefault([0, 1, 8, 8])).toBe(false);
  });
});

describe("a page of the grid", () => {
  it("fetches whole samples, at most 16 rows, and draws at most 16 channels", () => {
    const d = imageDims([1797, 1, 8, 8])!;
    expect(gridPage(d, 0, PAGE)).toEqual({ start: 0, rows: MAX_ROWS, cols: 1, offset: 0, count: 16 * 64, stride: 64 });
    const last = gridPage(d, 1792, PAGE);
    expect(last).toMatchObject({ start: 1792, rows: 5, offset: 1792 * 64, count: 5 * 64 });
    const wide = gridPage(imageDims([4, 40, 8, 8])!, 0, PAGE);
    expect(wide).toMatchObject({ rows: 4, cols: MAX_COLS, count: 4 * 40 * 64, stride: 40 * 64 });
  });

  it("never asks for more than a page", () => {
    const d = imageDims([100, 64, 32, 32])!; // 65,536 a sample: 4 fit a page
    const p = gridPage(d, 10, PAGE);
    expect(p).toMatchObject({ rows: 4, offset: 10 * 65536, count: 4 * 65536 });
    // one sample over a page: its first channels that fit
    const big = gridPage(imageDims([3, 8, 256, 256])!, 2, PAGE);
    expect(big).toMatchObject({ start: 2, rows: 1, cols: 4, offset: 2 * 8 * 65536, count: 4 * 65536, stride: 4 * 65536 });
    expect(big.count).toBeLessThanOrEqual(PAGE);
  });

  it("pages forward and back by the rows shown", () => {
    const d = imageDims([40, 1, 8, 8])!;
    expect(neighbours(d, gridPage(d, 0, PAGE), PAGE)).toEqual({ prev: null, next: 16 });
    expect(neighbours(d, gridPage(d, 16, PAGE), PAGE)).toEqual({ prev: 0, next: 32 });
    expect(neighbours(d, gridPage(d, 32, PAGE), PAGE)).toEqual({ prev: 16, next: null });
    expect(gridPage(d, 99, PAGE).start).toBe(39); // past the end: the last sample
  });
});

describe("colour scales", () => {
  it("spans the finite values for values, ±max|g| around 0 for gradients", () => {
    expect(scaleOf([0.5, -2, 3, NaN, Infinity], false)).toEqual({ diverging: false, lo: -2, hi: 3 });
    expect(scaleOf([0.5, -2, 1], true)).toEqual({ diverging: true, lo: -2, hi: 2 });
    expect(scaleOf([NaN], false)).toEqual({ diverging: false, lo: 0, hi: 1 });
  });

  it("spans only the channels drawn", () => {
    const d = imageDims([2, 20, 1, 1])!; // 20 channels of one element: 16 drawn
    const values = Array.from({ length: 40 }, (_, k) => k);
    const page = gridPage(d, 0, PAGE);
    expect(scaleOfPage(values, page, d, false)).toEqual({ diverging: false, lo: 0, hi: 35 });
  });

  it("runs dark to yellow for values, blue to white to red for gradients", () => {
    const seq = scaleOf([0, 1], false);
    expect(colourAt(0, seq)).toEqual([68, 1, 84]);
    expect(colourAt(1, seq)).toEqual([253, 231, 37]);
    expect(colourAt(7, seq)).toEqual([253, 231, 37]); // clamped
    const div = scaleOf([-2, 1], true);
    expect(colourAt(0, div)).toEqual([255, 255, 255]);
    expect(colourAt(-2, div)).toEqual([37, 99, 235]);
    expect(colourAt(2, div)).toEqual([220, 38, 38]);
    expect(colourAt(1, div)).toEqual([238, 147, 147]); // half way to red
    expect(colourAt(NaN, div)).toEqual(NAN_COLOUR);
    // a constant map is the middle of the ramp, not its end
    expect(colourAt(3, scaleOf([3, 3], false))).toEqual([33, 145, 140]);
  });

  it("paints a map's pixels from its first element, opaque", () => {
    const values = [9, 9, 0, 1, 0, 1]; // a 2x2 map from index 2
    const px = mapPixels(values, 2, 2, 2, scaleOf([0, 1], false));
    expect(Array.from(px.slice(0, 4))).toEqual([68, 1, 84, 255]);
    expect(Array.from(px.slice(4, 8))).toEqual([253, 231, 37, 255]);
    expect(px.length).toBe(16);
  });

  it("scales maps to about 48 px with whole pixels", () => {
    expect(zoomOf(8, 8)).toBe(6);
    expect(zoomOf(28, 28)).toBe(1);
    expect(zoomOf(2, 2)).toBe(8);
    expect(zoomOf(200, 3)).toBe(1);
  });
});

describe("the grid in a window of its own", () => {
  it("draws every channel and many samples a page, larger", () => {
    const d = imageDims([1797, 8, 8, 8])!;
    const page = gridPage(d, 0, PAGE, WINDOW_LIMITS);
    expect(page).toMatchObject({ rows: 128, cols: 8, count: 128 * 8 * 64 });
    expect(neighbours(d, page, PAGE, WINDOW_LIMITS)).toEqual({ prev: null, next: 128 });
    // 40 channels: all of them (the side panel draws 16), as many samples as a page holds
    const wide = gridPage(imageDims([1797, 40, 8, 8])!, 0, PAGE, WINDOW_LIMITS);
    expect(wide).toMatchObject({ rows: 102, cols: 40, count: 102 * 40 * 64 });
    expect(zoomOf(8, 8, WINDOW_LIMITS.mapPx)).toBe(12);
    expect(zoomOf(3, 3, WINDOW_LIMITS.mapPx)).toBe(16); // a 3x3 kernel: 48 px, not 24
  });
});
