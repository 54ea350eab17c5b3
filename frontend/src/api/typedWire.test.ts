import { describe, expect, it } from "vitest";
import { SummaryRows } from "./summaryRows";
import { decodeTyped, materialize, Typed, WireError } from "./typedWire";
import type { WireRecord } from "./types";
import { WidgetChannel, type WidgetModel } from "./widgetChannel";

// Written by the server's encoder (backend/server/typed_wire.py encode, its random tag drawn as
// 0123456789abcdef) for
// {f: float32 [[0.1, -0], [nan, -inf]], i: int64 [2^53 + 1, -5], b: bool [T, F, T],
//  d: float64 [1/3], h: float16 [1.5] (sent as float32), s: "x"}
const TAG = "0123456789abcdef";
const TEXT = (
  '{"f":{"$typed":"float32","shape":[2,2],"offset":8,"tag":"T"},' +
  '"i":{"$typed":"int64","shape":[2],"offset":24,"tag":"T"},' +
  '"b":{"$typed":"bool","shape":[3],"offset":40,"tag":"T"},' +
  '"d":{"$typed":"float64","shape":[1],"offset":48,"tag":"T"},' +
  '"h":{"$typed":"float32","shape":[1],"offset":56,"tag":"T"},"s":"x"}'
).replaceAll('"T"', `"${TAG}"`);
const HEX =
  TAG +
  "cdcccc3d000000800000c07f000080ff0100000000002000fbffffffffffffff0100010000000000555555555555d53f0000c03f";

/** `size` bytes that begin with the tag: a buffer as the server writes one, arrays from byte 8. */
function tagged(size: number): ArrayBuffer {
  const buf = new ArrayBuffer(size);
  new Uint8Array(buf, 0, 8).set(bytes(TAG));
  return buf;
}

/** A descriptor of the tagged buffer. */
function desc(dtype: string, shape: number[], offset: number) {
  return { $typed: dtype, shape, offset, tag: TAG };
}

function bytes(hex: string): Uint8Array {
  return new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16)));
}

function message() {
  return { payload: JSON.parse(TEXT) as Record<string, unknown>, blob: bytes(HEX).buffer as ArrayBuffer };
}

describe("typed arrays from the wire", () => {
  it("reads each dtype's bytes exactly, as views of the message's buffer", () => {
    const { payload, blob } = message();
    const m = decodeTyped(payload, blob) as Record<string, Typed>;
    expect(m.s).toBe("x");
    expect(m.f).toBeInstanceOf(Typed);
    expect(m.f.data).toBeInstanceOf(Float32Array);
    expect(m.f.data.buffer).toBe(blob); // a view: nothing copied
    expect(m.f.shape).toEqual([2, 2]);
    expect(m.f.at(0)).toBe(Math.fround(0.1));
    expect(Object.is(m.f.at(1), -0)).toBe(true);
    expect(m.f.at(2)).toBeNaN();
    expect(m.f.at(3)).toBe(-Infinity);
    expect(m.i.data).toBeInstanceOf(BigInt64Array);
    expect(m.i.data[0]).toBe(2n ** 53n + 1n); // exact, past a double's integers
    expect(m.i.at(1)).toBe(-5);
    expect([0, 1, 2].map((k) => m.b.at(k))).toEqual([true, false, true]);
    expect(m.d.at(0)).toBe(1 / 3);
    expect(m.h.dtype).toBe("float32");
    expect(m.h.at(0)).toBe(1.5);
    // as numbers for a viewer: the view itself where JavaScript numbers hold the dtype
    expect(m.f.numbers()).toBe(m.f.data);
    expect(Array.from(m.b.numbers())).toEqual([1, 0, 1]);
    expect(Array.from(m.i.numbers())).toEqual([2 ** 53, -5]);
  });

  it("writes nested values as the JSON wire did: rows, NaN and infinities spelled", () => {
    const { payload, blob } = message();
    const m = materialize(decodeTyped(payload, blob)) as Record<string, unknown>;
    expect(m.f).toEqual([
      [Math.fround(0.1), -0],
      ["nan", "-inf"],
    ]);
    expect(m.b).toEqual([true, false, true]);
    expect(m.i).toEqual([2 ** 53, -5]); // as a JS number: what JSON gave too
  });

  it("reads a buffer that starts at an odd offset (a DataView from Jupyter)", () => {
    const src = bytes(HEX);
    const big = new Uint8Array(src.length + 3);
    big.set(src, 3);
    const m = decodeTyped(JSON.parse(TEXT), new DataView(big.buffer, 3, src.length)) as Record<string, Typed>;
    expect(m.f.at(0)).toBe(Math.fround(0.1));
    expect(m.i.data[0]).toBe(2n ** 53n + 1n);
    // at an aligned offset the arrays are views of the very buffer, nothing copied
    const aligned = new Uint8Array(src.length + 8);
    aligned.set(src, 8);
    const a = decodeTyped(JSON.parse(TEXT), new DataView(aligned.buffer, 8, src.length)) as Record<string, Typed>;
    expect(a.f.data.buffer).toBe(aligned.buffer);
    expect(a.i.data[0]).toBe(2n ** 53n + 1n);
    expect(a.d.at(0)).toBe(1 / 3);
  });

  it("leaves a message without a buffer as it is", () => {
    const plain = { values: [1, 2], x: desc("float32", [1], 8) };
    expect(decodeTyped(plain, undefined)).toBe(plain);
  });

  it("reads an object shaped like a descriptor without the message's tag as the object it is", () => {
    // a room owner's graph param in a message that has a buffer: not the message's arrays
    const { blob } = message();
    const forged = { $typed: "float32", shape: [1], offset: 8 };
    const guessed = { ...forged, tag: "0000000000000000" };
    const m = decodeTyped({ p: forged, q: guessed, r: [{ ...forged }] }, blob) as Record<string, unknown>;
    expect(m.p).toEqual(forged);
    expect(m.q).toEqual(guessed);
    expect(m.r).toEqual([forged]);
    // a buffer too short for a tag holds no arrays
    expect(decodeTyped({ p: desc("float32", [1], 8) }, new ArrayBuffer(4))).toEqual({ p: desc("float32", [1], 8) });
  });

  it("refuses descriptors that do not fit the buffer", () => {
    const blob = tagged(24);
    const bad = (d: unknown) => () => decodeTyped({ a: d }, blob);
    expect(bad(desc("float32", [5], 8))).toThrow(WireError);
    expect(bad(desc("float32", [1], 12))).toThrow(/does not fit/);
    expect(bad(desc("float32", [1], 24))).toThrow(WireError);
    expect(bad(desc("complex64", [1], 8))).toThrow(/unknown dtype/);
    expect(bad(desc("float32", [-1], 8))).toThrow(WireError);
  });
});

describe("a typed summary table", () => {
  // two rows of shape [2] float32: previews [[1.5, 2], [-3, 0.25]]
  function typedTable(): WireRecord {
    const buf = tagged(120); // previews at 8, stats at 24, NaN/Inf counts at 104
    new Float32Array(buf, 8, 4).set([1.5, 2, -3, 0.25]);
    new Float64Array(buf, 24, 10).set([1.5, 2, 1.75, 0.25, 2.5, -3, 0.25, -1.375, 1.625, 3.0104]);
    new BigInt64Array(buf, 104, 2).set([0n, 0n]);
    const wire = {
      kind: "summaries",
      first: 0,
      rows: 2,
      shape: [2],
      dtype: "float32",
      numel: 2,
      requires_grad: [true, false],
      grad_fn: [null, "AddBackward0"],
      nan: desc("int64", [2], 104),
      inf: desc("int64", [2], 104),
      stats: desc("float64", [2, 5], 24),
      preview: desc("float32", [2, 2], 8),
    };
    return decodeTyped(wire, new Uint8Array(buf)) as unknown as WireRecord;
  }

  it("gives each row's summary, its preview written out when read", () => {
    const rows = new SummaryRows();
    const records = rows.expand("r1", [typedTable(), { kind: "values", nodes: ["a", "b"], summary: [0, 1] }]);
    expect(records).toHaveLength(2);
    const [a, b] = records.map((r) => (r as { summary: import("./types").Summary }).summary);
    expect(a.nan).toBe(0);
    expect(a.stats).toEqual({ min: 1.5, max: 2, mean: 1.75, std: 0.25, norm: 2.5 });
    expect(b.stats).toEqual({ min: -3, max: 0.25, mean: -1.375, std: 1.625, norm: 3.0104 });
    expect(a.preview).toEqual([1.5, 2]);
    expect(b.preview).toEqual([-3, 0.25]);
    expect(b.grad_fn).toBe("AddBackward0");
    // a summary copied with a spread keeps the values
    expect({ ...b }.preview).toEqual([-3, 0.25]);
  });
});

describe("the widget's channel", () => {
  function fakeModel() {
    const handlers: ((msg: unknown, buffers?: (DataView | ArrayBuffer)[]) => void)[] = [];
    const sent: unknown[] = [];
    const model: WidgetModel = {
      get: () => null,
      set: () => {},
      save_changes: () => {},
      send: (content) => void sent.push(content),
      on: (_event, handler) => void handlers.push(handler as never),
      off: () => {},
    };
    const deliver = (json: unknown, blob?: Uint8Array) => {
      const text = new TextEncoder().encode(JSON.stringify(json));
      const buffers: DataView[] = [new DataView(text.buffer)];
      if (blob) {
        // Jupyter hands buffers as DataViews, not always at offset 0
        const shifted = new Uint8Array(blob.length + 1);
        shifted.set(blob, 1);
        buffers.push(new DataView(shifted.buffer, 1, blob.length));
      }
      for (const h of handlers) h({ type: "packed", wire: 2 }, buffers);
    };
    return { model, sent, deliver };
  }

  it("hands an event's typed arrays on as its last argument, as Socket.IO does", () => {
    const { model, deliver } = fakeModel();
    const channel = new WidgetChannel(model);
    const got: unknown[][] = [];
    channel.socket.on("trace", ((...args: unknown[]) => void got.push(args)) as never);
    deliver({ type: "event", event: "trace", data: JSON.parse(TEXT) }, bytes(HEX));
    expect(got).toHaveLength(1);
    const m = decodeTyped(got[0][0], got[0][1] as DataView) as Record<string, Typed>;
    expect(m.i.data[0]).toBe(2n ** 53n + 1n);
    expect(m.f.at(0)).toBe(Math.fround(0.1));
  });

  it("announces its wire with every request and hands a reply's buffer to the ack", async () => {
    const { model, sent, deliver } = fakeModel();
    const channel = new WidgetChannel(model);
    const reply = new Promise<unknown[]>((resolve) =>
      channel.socket.timeout(1000).emit("tensor", { run_id: "r" }, ((...args: unknown[]) => resolve(args)) as never),
    );
    expect(sent).toEqual([{ type: "request", id: 1, event: "tensor", payload: { run_id: "r" }, wire: 2 }]);
    deliver({ type: "reply", id: 1, data: JSON.parse(TEXT) }, bytes(HEX));
    const [err, data, blob] = await reply;
    expect(err).toBeNull();
    const m = decodeTyped(data, blob as DataView) as Record<string, Typed>;
    expect([0, 1, 2].map((k) => m.b.at(k))).toEqual([true, false, true]);
  });
});

describe("the connection", () => {
  // a SocketLike standing in for socket.io-client, as the widget's channel does (api/host.ts)
  function fakeSocket() {
    const handlers = new Map<string, ((...args: unknown[]) => void)[]>();
    let answer: unknown[] = [];
    const socket = {
      connected: true,
      on: (event: string, h: (...args: unknown[]) => void) => void handlers.set(event, [...(handlers.get(event) ?? []), h]),
      off: () => {},
      timeout: () => ({
        emit: (_event: string, _payload: unknown, ack: (...args: unknown[]) => void) => queueMicrotask(() => ack(null, ...answer)),
      }),
      emit: () => {},
    };
    const push = (event: string, ...args: unknown[]) => handlers.get(event)?.forEach((h) => h(...args));
    return { socket, push, answerWith: (...args: unknown[]) => void (answer = args) };
  }

  async function connection() {
    const fake = fakeSocket();
    const { setHostChannel } = await import("./host");
    setHostChannel({
      socket: fake.socket as never,
      api: async () => ({ status: 200, data: null, headers: {} }),
      readOnly: false,
      document: null,
      edited: () => {},
      onDocument: () => {},
    });
    const { Connection } = await import("./socket");
    const conn = new Connection();
    setHostChannel(null);
    return { conn, ...fake };
  }

  it("gives a tensor reply's values as a view, written out only when read", async () => {
    const { conn, answerWith } = await connection();
    const buf = tagged(24);
    new BigInt64Array(buf, 8).set([2n ** 53n + 1n, -5n]);
    answerWith({ run_id: "r", kind: "value", shape: [2], dtype: "int64", values: desc("int64", [2], 8) }, buf);
    const reply = await conn.tensor("r", { node: "i" }, "value");
    expect(reply.typed).toBeInstanceOf(Typed);
    expect(reply.typed!.data.buffer).toBe(buf);
    expect((reply.typed!.data as BigInt64Array)[0]).toBe(2n ** 53n + 1n);
    expect(reply.values).toEqual([2 ** 53, -5]);
  });

  it("hands Socket.IO's own events on as they come (a disconnect's details are no buffer)", async () => {
    const { conn, push } = await connection();
    const reasons: unknown[] = [];
    conn.on("disconnect", (reason) => reasons.push(reason));
    push("disconnect", "transport close", { description: "closed", context: {} });
    expect(reasons).toEqual(["transport close"]);
  });

  it("refuses a reply whose arrays do not fit its buffer", async () => {
    const { conn, answerWith } = await connection();
    answerWith({ run_id: "r", values: desc("float64", [4], 8) }, tagged(16));
    await expect(conn.tensor("r", { node: "x" }, "value")).rejects.toThrow(WireError);
  });

  it("keeps a trace's columns typed and writes other events' arrays out", async () => {
    const { conn, push } = await connection();
    const got: unknown[] = [];
    conn.onRuns({ onStarted: () => {}, onRecords: (_id, records) => got.push(...records), onFinished: () => {} });
    const snapshots: unknown[] = [];
    conn.on("train_snapshot", (m) => snapshots.push(m));
    const buf = tagged(16);
    new Float32Array(buf, 8).set([0.5, -1]);
    const table = {
      kind: "summaries", first: 0, rows: 1, shape: [2], dtype: "float32", numel: 2,
      requires_grad: [false], grad_fn: [null], nan: [0], inf: [0], stats: [null],
      preview: desc("float32", [1, 2], 8),
    };
    push("trace", { run_id: "r", records: [table, { kind: "values", nodes: ["a"], summary: [0] }] }, buf);
    expect(got).toEqual([{ kind: "value", node: "a", summary: expect.objectContaining({ preview: [0.5, -1] }) }]);
    push("train_snapshot", { train_id: "t", boundary: { values: desc("float32", [1, 2], 8) } }, buf);
    expect(snapshots).toEqual([{ train_id: "t", boundary: { values: [[0.5, -1]] } }]);
  });
});
