// A run's records shown a frame's worth at a time, and its end only once they are shown.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunFinished, TraceRecord } from "../api/types";
import { RecordFeed, RECORDS_PER_FRAME } from "./recordFeed";

const frames: FrameRequestCallback[] = [];
const nextFrame = () => frames.shift()?.(0);
const records = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: "value", node: `n${i}` }) as unknown as TraceRecord);
const finished = { run_id: "r", status: "ok" } as RunFinished;

describe("record feed", () => {
  beforeEach(() => vi.stubGlobal("requestAnimationFrame", (f: FrameRequestCallback) => frames.push(f)));
  afterEach(() => {
    frames.length = 0;
    vi.unstubAllGlobals();
  });

  it("folds a frame's share at a time and says the run finished after its last record", () => {
    const shown: number[] = [];
    const ends: RunFinished[] = [];
    const feed = new RecordFeed((batch) => shown.push(batch.length), (f) => ends.push(f));
    feed.push(records(2 * RECORDS_PER_FRAME + 10));
    feed.finished(finished);
    expect(ends).toEqual([]);
    nextFrame();
    nextFrame();
    expect(shown).toEqual([RECORDS_PER_FRAME, RECORDS_PER_FRAME]);
    expect(ends).toEqual([]);
    nextFrame();
    expect(shown).toEqual([RECORDS_PER_FRAME, RECORDS_PER_FRAME, 10]);
    expect(ends).toEqual([finished]);
    // nothing waiting: the end is said at once
    feed.finished(finished);
    expect(ends).toHaveLength(2);
  });

  it("drops what waits when another run is shown", () => {
    const shown: number[] = [];
    const ends: RunFinished[] = [];
    const feed = new RecordFeed((batch) => shown.push(batch.length), (f) => ends.push(f));
    feed.push(records(RECORDS_PER_FRAME + 1));
    feed.finished(finished);
    nextFrame();
    feed.clear();
    nextFrame();
    expect(shown).toEqual([RECORDS_PER_FRAME, 0]);
    expect(ends).toEqual([]);
  });
});
