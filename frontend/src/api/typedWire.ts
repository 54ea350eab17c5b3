// Arrays as typed binary buffers (docs/protocol.md, "Typed arrays"; the server's side is
// backend/server/typed_wire.py). A message is its JSON, in which each array is a descriptor
// {"$typed": dtype, "shape": [...], "offset": n, "tag": t}, and one binary buffer holding the
// arrays' little-endian bytes, each at an offset that is a multiple of 8. The buffer's first 8
// bytes are the message's random tag: only a descriptor whose `tag` is their hex is read as an
// array, so an object a user made in that shape (a room owner's graph param) stays what it was.
// Over Socket.IO the buffer is
// the message's last argument (its one binary attachment); from the notebook's kernel it is the
// custom message's second buffer (widgetChannel.ts). Here a descriptor becomes a `Typed`: a
// typed-array view of the buffer, made without copying or converting anything; numbers are
// read from it when something reads them.

/** Values as nested arrays, as JSON carries them: JSON has no NaN or Infinity, so they are
 * spelled "nan", "inf" and "-inf". (api/types.ts re-exports it.) */
export type Nested = number | boolean | "nan" | "inf" | "-inf" | Nested[];

/** The wire's version: 1 sent JSON numbers, 2 typed arrays. The page announces it when it
 * connects; a server of another version answers every message with code "client_version". */
export const WIRE_VERSION = 2;

type View =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

type ViewClass = { new (buffer: ArrayBuffer, byteOffset: number, length: number): View; BYTES_PER_ELEMENT: number };

const VIEWS: Record<string, ViewClass> = {
  float32: Float32Array,
  float64: Float64Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
};

/** A message's arrays' bytes as they come: an ArrayBuffer (socket.io-client in a browser), a
 * Uint8Array (in Node) or a DataView (Jupyter's buffers). */
export type WireBuffer = ArrayBuffer | ArrayBufferView;

/** A message whose typed arrays do not fit its buffer: a broken or foreign server. */
export class WireError extends Error {}

/** One array of a message: its dtype as the server names it, its shape, and a view of the
 * message's buffer (int64 as a BigInt64Array, bool as a Uint8Array of 0 and 1). */
export class Typed {
  constructor(
    readonly dtype: string,
    readonly shape: number[],
    readonly data: View,
  ) {}

  get length(): number {
    return this.data.length;
  }

  /** Element i, flat and row-major: a number (int64 exact up to 2^53), a boolean for bool. */
  at(i: number): number | boolean {
    const v = this.data[i];
    if (this.dtype === "bool") return v !== 0;
    return typeof v === "bigint" ? Number(v) : v;
  }

  /** The elements as numbers, flat and row-major, for a viewer that reads many (a table, a
   * heatmap): the view itself for float and up-to-32-bit integer arrays (bool's 0 and 1
   * included), a Float64Array copy of int64 and uint64 (exact up to 2^53). */
  numbers(): ArrayLike<number> {
    const d = this.data;
    if (d instanceof BigInt64Array || d instanceof BigUint64Array) return Float64Array.from(d, Number);
    return d;
  }

  /** Row k of the first axis, as a view of the same buffer. */
  row(k: number): Typed {
    const inner = this.shape.slice(1);
    const n = inner.reduce((a, b) => a * b, 1);
    return new Typed(this.dtype, inner, this.data.subarray(k * n, (k + 1) * n) as View);
  }

  /** The values as the JSON wire wrote them: nested arrays, NaN and infinities spelled
   * "nan", "inf", "-inf" (what the panels that read previews take). */
  nested(): Nested {
    let i = 0;
    const build = (dim: number): Nested => {
      if (dim === this.shape.length) return spell(this.at(i++));
      const out: Nested[] = new Array(this.shape[dim]);
      for (let j = 0; j < out.length; j++) out[j] = build(dim + 1);
      return out;
    };
    return build(0);
  }
}

function spell(v: number | boolean): Nested {
  if (typeof v === "boolean" || Number.isFinite(v)) return v;
  return Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

function isDescriptor(x: Record<string, unknown>, tag: string | null): boolean {
  return (
    tag !== null &&
    x.tag === tag &&
    typeof x.$typed === "string" &&
    Array.isArray(x.shape) &&
    typeof x.offset === "number"
  );
}

/** The message's tag: its buffer's first 8 bytes in hex (null for a buffer too short). */
function tagOf(bytes: Bytes): string | null {
  if (bytes.length < 8) return null;
  const head = new Uint8Array(bytes.buffer, bytes.start, 8);
  return Array.from(head, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Where the message's bytes lie: an ArrayBuffer and the 8-aligned byte the message starts at,
 * so that every array is aligned for its view (a DataView from Jupyter, or a Node Buffer, may
 * start anywhere: one that is not aligned is copied once). */
interface Bytes {
  buffer: ArrayBuffer;
  start: number;
  length: number;
}

function bytesOf(blob: WireBuffer): Bytes {
  if (blob instanceof ArrayBuffer) return { buffer: blob, start: 0, length: blob.byteLength };
  const { buffer, byteOffset, byteLength } = blob;
  if (byteOffset % 8 === 0 && buffer instanceof ArrayBuffer) return { buffer, start: byteOffset, length: byteLength };
  const copy = new Uint8Array(buffer, byteOffset, byteLength).slice().buffer;
  return { buffer: copy, start: 0, length: byteLength };
}

function view(desc: Record<string, unknown>, bytes: Bytes): Typed {
  const dtype = desc.$typed as string;
  const shape = desc.shape as unknown[];
  const offset = desc.offset as number;
  const View = VIEWS[dtype];
  if (!View) throw new WireError(`a typed array of unknown dtype ${JSON.stringify(dtype)}`);
  if (!shape.every((d) => Number.isInteger(d) && (d as number) >= 0))
    throw new WireError(`a typed array of shape ${JSON.stringify(shape)}`);
  const count = (shape as number[]).reduce((a, b) => a * b, 1);
  const end = offset + count * View.BYTES_PER_ELEMENT;
  if (!Number.isInteger(offset) || offset < 0 || offset % 8 !== 0 || end > bytes.length)
    throw new WireError(
      `a typed array of ${count} ${dtype} at byte ${offset} does not fit the message's ${bytes.length} bytes`,
    );
  return new Typed(dtype, shape as number[], new View(bytes.buffer, bytes.start + offset, count));
}

/** `value` (a message's JSON) with its descriptors replaced by Typed views of `blob`; without
 * a blob (a message with no arrays, an exported page's stored packets) it is returned as is. */
export function decodeTyped<T>(value: T, blob?: WireBuffer | null): T {
  if (blob == null) return value;
  const bytes = bytesOf(blob);
  const tag = tagOf(bytes);
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) {
        const v = x[i];
        if (v !== null && typeof v === "object") x[i] = walk(v);
      }
      return x;
    }
    if (x !== null && typeof x === "object") {
      const o = x as Record<string, unknown>;
      if (isDescriptor(o, tag)) return view(o, bytes);
      for (const k of Object.keys(o)) {
        const v = o[k];
        if (v !== null && typeof v === "object") o[k] = walk(v);
      }
    }
    return x;
  };
  return walk(value) as T;
}

/** `value` with every Typed written out as nested arrays: for the stores that read numbers
 * as the JSON wire gave them (trainings, rooms); runs' records and tensor pages stay typed. */
export function materialize<T>(value: T): T {
  const walk = (x: unknown): unknown => {
    if (x instanceof Typed) return x.nested();
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) {
        const v = x[i];
        if (v !== null && typeof v === "object") x[i] = walk(v);
      }
    } else if (x !== null && typeof x === "object") {
      const o = x as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        const v = o[k];
        if (v !== null && typeof v === "object") o[k] = walk(v);
      }
    }
    return x;
  };
  return walk(value) as T;
}

/** A number of a column that is a list (the JSON wire) or a Typed (wire 2). */
export function numberAt(column: ArrayLike<number> | Typed, k: number): number {
  return column instanceof Typed ? Number(column.at(k)) : column[k];
}
