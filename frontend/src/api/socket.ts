// The Socket.IO side of the protocol (docs/protocol.md): run, cancel and tensor, each
// acknowledged; trace packets and run_finished pushed by the server. Arrays come as typed
// binary buffers (api/typedWire.ts): a message's last argument is its arrays' buffer.
import { io, type Socket } from "socket.io-client";
import type {
  GraphDocument,
  RunFinished,
  RunMode,
  TensorReply,
  TraceRecord,
  WireRecord,
} from "./types";
import { type RunAck, RunSender } from "./edits";
import { hostChannel } from "./host";
import { SummaryRows } from "./summaryRows";
import { decodeTyped, materialize, Typed, WIRE_VERSION, type WireBuffer } from "./typedWire";

export interface RunHandlers {
  // adopt: a run the page did not ask for that it shows (the kernel's `w.run` in a notebook)
  onStarted: (runId: string, mode: RunMode, target: string | null, adopt: boolean) => void;
  onRecords: (runId: string, records: TraceRecord[]) => void;
  onFinished: (finished: RunFinished) => void;
}

/** Run options (docs/protocol.md, docs/training.md "Run options for teaching"). */
export interface RunOptions {
  accumulate_grad?: boolean;
  backward_twice?: boolean;
  retain_graph?: boolean;
  gradient_ones?: boolean;
  no_grad?: boolean;
}

export type { RunAck };

/** The page's one connection to the server (Socket.IO, or the widget's channel to the kernel in
 * a notebook: api/host.ts). store/connection.ts holds it for the page's life; the stores send
 * through it, and store/reactions.ts hands its pushed events to them. */
export class Connection {
  readonly socket: Socket;
  // runs go out as an edit of the last one when only some nodes changed since (edits.ts)
  private readonly runs = new RunSender((payload) => this.request<RunAck>("run", payload));
  // the summary rows of the runs whose packets came through here (api/summaryRows.ts)
  private readonly rows = new SummaryRows();

  constructor() {
    // websocket first: no long-polling round trips while a run streams
    // in a notebook, the widget's channel to the kernel stands in for the socket (api/host.ts)
    const host = hostChannel();
    this.socket = host
      ? (host.socket as unknown as Socket)
      : io({
          transports: ["websocket", "polling"],
          reconnectionDelayMax: 3000,
          // the wire this page reads: a server of another answers "client_version" (typedWire.ts)
          auth: { wire: WIRE_VERSION },
        });
    // a new connection's server has none of the last runs: the next one goes whole
    this.socket.on("disconnect", () => this.runs.forget());
  }

  /** Hand the runs' pushed packets to `handlers`; returns the function that stops it. */
  onRuns(handlers: RunHandlers): () => void {
    const offs = [
      this.on<{ run_id: string; mode: RunMode; target?: string | null; adopt?: boolean }>("run_started", (m) =>
        handlers.onStarted(m.run_id, m.mode, m.target ?? null, m.adopt === true),
      ),
      // a run's records keep their typed columns: summaryRows.ts reads them where they lie
      this.onTyped<{ run_id: string; records: WireRecord[] }>("trace", (m) =>
        handlers.onRecords(m.run_id, this.expandRecords(m.run_id, m.records)),
      ),
      this.on<RunFinished>("run_finished", (m) => handlers.onFinished(m)),
    ];
    return () => offs.forEach((off) => off());
  }

  /** Tell `onStatus` whenever the connection comes or goes; returns the function that stops it. */
  onStatus(onStatus: (connected: boolean) => void): () => void {
    const offs = [
      this.on("connect", () => onStatus(true)),
      this.on("disconnect", () => onStatus(false)),
      this.on("connect_error", () => onStatus(false)),
    ];
    return () => offs.forEach((off) => off());
  }

  /** A run's records as this connection brought them (its packets, or a room's catch-up),
   * their summaries written out (api/summaryRows.ts). */
  expandRecords(runId: string, wire: WireRecord[]): TraceRecord[] {
    return this.rows.expand(runId, wire);
  }

  /** Listen to a server event (training and room events: see their stores); returns the
   * function that stops listening. Its arrays come as nested numbers, as JSON gave them. */
  on<T>(event: string, handler: (payload: T) => void): () => void {
    return this.listen<T>(event, handler, false);
  }

  /** Listen to a server event with its arrays as Typed views of the message's buffer. */
  private onTyped<T>(event: string, handler: (payload: T) => void): () => void {
    return this.listen<T>(event, handler, true);
  }

  private listen<T>(event: string, handler: (payload: T) => void, typed: boolean): () => void {
    const h = ((payload: T, blob?: unknown) => {
      // no buffer, no arrays: nothing to read or write out (Socket.IO's own events, such as
      // "disconnect" with its reason and details, are handed on as they come)
      if (!isBuffer(blob)) handler(payload);
      else handler(typed ? decodeTyped(payload, blob) : materialize(decodeTyped(payload, blob)));
    }) as (...args: unknown[]) => void;
    this.socket.on(event, h);
    return () => void this.socket.off(event, h);
  }

  /** Send `event` and wait for its acknowledgement (its arrays as nested numbers, or with
   * `typed` as Typed views). */
  request<T>(event: string, payload: unknown, timeoutMs = 30000, typed = false): Promise<T> {
    return new Promise((resolve, reject) => {
      if (!this.socket.connected) {
        reject(new Error("not connected to the server"));
        return;
      }
      const ack = (err: Error | null, reply: T, blob?: unknown) => {
        if (err) reject(new Error(`the server did not answer '${event}' in time`));
        else {
          try {
            const buffer = isBuffer(blob) ? blob : null;
            const decoded = decodeTyped(reply, buffer);
            resolve(typed || buffer == null ? decoded : materialize(decoded));
          } catch (e) {
            reject(e as Error);
          }
        }
      };
      this.socket.timeout(timeoutMs).emit(event, payload, ack as (err: Error | null, reply: never) => void);
    });
  }

  run(
    graph: GraphDocument,
    mode: RunMode,
    target?: string | null,
    options?: RunOptions,
  ): Promise<RunAck> {
    const payload: Record<string, unknown> = { mode };
    if (mode === "backward" && target) payload.target = target;
    if (options && Object.values(options).some(Boolean)) payload.options = options;
    return this.runs.run(graph, payload);
  }

  cancel(runId: string) {
    return this.request<{ ok?: boolean; error?: string }>("cancel", { run_id: runId });
  }

  async tensor(
    runId: string,
    where: { node: string } | { edge: string },
    kind: "value" | "grad",
    param?: string | null,
    page?: { offset: number; count: number },
  ): Promise<TensorReply> {
    const payload: Record<string, unknown> = { run_id: runId, kind, ...where };
    if (param) payload.param = param;
    if (page) Object.assign(payload, page); // only what the viewer shows (docs/protocol.md)
    const reply = await this.request<TensorReply & { error?: string }>("tensor", payload, 30000, true);
    if (reply.error) throw new Error(reply.error);
    return typedValues(reply);
  }
}

/** Whether a message's last argument is its arrays' buffer (typedWire.ts). */
function isBuffer(x: unknown): x is WireBuffer {
  return x instanceof ArrayBuffer || ArrayBuffer.isView(x);
}

/** A tensor reply whose values came typed: `typed` is the view, and `values` the nested
 * numbers, written out only if something reads them. */
export function typedValues(reply: TensorReply): TensorReply {
  const values: unknown = reply.values;
  if (!(values instanceof Typed)) return reply;
  let nested: TensorReply["values"] | undefined;
  Object.defineProperty(reply, "values", {
    enumerable: true,
    configurable: true,
    get: () => (nested ??= values.nested()),
    set: (v: TensorReply["values"]) => void (nested = v),
  });
  reply.typed = values;
  return reply;
}
