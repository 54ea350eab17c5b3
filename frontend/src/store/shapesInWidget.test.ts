// In a notebook widget the shapes before a run are asked of the kernel over the widget's
// channel (api/host.ts), never fetched from the page's own server: Jupyter's or marimo's
// refuses /api/validate (marimo answers 401), and the shapes never showed.
import { afterEach, describe, expect, it, vi } from "vitest";
import { type HostChannel, setHostChannel } from "../api/host";
import { keepShapes, useShapes } from "./shapes";

afterEach(() => {
  setHostChannel(null);
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("shapes in a notebook widget", () => {
  it("are the kernel's answer to POST /validate?shapes=1, with no fetch", async () => {
    vi.useFakeTimers();
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    const api = vi.fn(async () => ({
      status: 200,
      data: { ok: true, node_errors: [], shapes: { x: [2], sum: [] } },
      headers: {},
    }));
    setHostChannel({ api } as unknown as HostChannel);
    const stop = keepShapes();
    await vi.advanceTimersByTimeAsync(300);
    stop();
    expect(fetch).not.toHaveBeenCalled();
    expect(api).toHaveBeenCalledTimes(1);
    const [method, path, body] = api.mock.calls[0] as unknown as [string, string, { nodes: unknown[] }];
    expect([method, path]).toEqual(["POST", "/validate?shapes=1"]);
    expect(Array.isArray(body.nodes)).toBe(true);
    expect(useShapes.getState().shapes).toEqual({ x: [2], sum: [] });
  });
});
