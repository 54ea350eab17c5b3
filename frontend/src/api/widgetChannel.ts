// The widget's channel to the kernel (api/host.ts): requests go as custom messages
// {type: "request", id, event, payload} and come back as {type: "reply", id, data}; the kernel
// pushes {type: "event", event, data} (run_started, trace, run_finished, train_*) and
// {type: "document", document}. The kernel's side: wiregrad/kernel.py. Its messages come in
// the server's wire (api/typedWire.ts): the JSON in the first binary buffer, the arrays' bytes
// in the second, handed on as the last argument as Socket.IO hands its attachment.
import type { ApiReply, HostChannel, SocketLike } from "./host";
import { WIRE_VERSION } from "./typedWire";
import type { GraphDocument } from "./types";

type Buffer = DataView | ArrayBuffer;

/** What the editor uses of anywidget's model. */
export interface WidgetModel {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  save_changes(): void;
  send(content: unknown, callbacks?: unknown, buffers?: ArrayBuffer[]): void;
  on(event: string, handler: (...args: never[]) => void): void;
  off(event?: string | null, handler?: ((...args: never[]) => void) | null): void;
}

type Handler = (...args: unknown[]) => void;

interface Message {
  type: string;
  id?: number;
  event?: string;
  data?: unknown;
  document?: GraphDocument;
}

export class WidgetChannel implements HostChannel {
  readonly socket: SocketLike;
  document: GraphDocument | null;
  readonly readOnly: boolean;
  private next = 1;
  private waiting = new Map<number, (reply: unknown, blob?: Buffer) => void>();
  private handlers = new Map<string, Handler[]>();
  private documentHandlers: ((doc: GraphDocument) => void)[] = [];
  private readonly listener: (msg: Message, buffers?: Buffer[]) => void;

  constructor(private readonly model: WidgetModel) {
    const doc = model.get("document") as GraphDocument | null;
    this.document = doc && Object.keys(doc).length ? doc : null;
    this.readOnly = model.get("read_only") === true;
    // the kernel's messages come packed: its JSON in a binary buffer (wiregrad/widget.py)
    const decoder = new TextDecoder();
    this.listener = (msg: Message, buffers?: Buffer[]) => {
      if (msg.type === "packed" && buffers?.length) {
        const b = buffers[0];
        const bytes = b instanceof DataView ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);
        this.receive(JSON.parse(decoder.decode(bytes)) as Message, buffers[1]);
      } else this.receive(msg);
    };
    model.on("msg:custom", this.listener as never);
    const channel = this;
    this.socket = {
      connected: !this.readOnly,
      on: (event: string, handler: Handler) => {
        channel.handlers.set(event, [...(channel.handlers.get(event) ?? []), handler]);
        // the page's Socket.IO code waits for "connect": the channel is open from the start
        if (event === "connect" && !channel.readOnly) queueMicrotask(() => handler());
      },
      off: (event: string, handler: Handler) => {
        channel.handlers.set(event, (channel.handlers.get(event) ?? []).filter((h) => h !== handler));
      },
      timeout: (ms: number) => ({
        emit: (event: string, payload: unknown, ack: (err: Error | null, reply: never, blob?: Buffer) => void) => {
          channel.exchange(event, payload, ms).then(
            ([reply, blob]) => ack(null, reply as never, blob),
            (err: Error) => ack(err, undefined as never),
          );
        },
      }),
      emit: (event: string, ...args: unknown[]) => {
        const last = args[args.length - 1];
        const payload = args[0];
        const p = channel.request(event, payload, 30000);
        if (typeof last === "function") p.then((r) => (last as Handler)(r));
      },
    } as unknown as SocketLike;
  }

  request(event: string, payload: unknown, timeoutMs: number): Promise<unknown> {
    return this.exchange(event, payload, timeoutMs).then(([reply]) => reply);
  }

  /** A request and its reply with the reply's arrays' buffer (undefined: none). */
  exchange(event: string, payload: unknown, timeoutMs: number): Promise<[unknown, Buffer | undefined]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the kernel did not answer '${event}' in time`));
      }, timeoutMs);
      this.waiting.set(id, (reply, blob) => {
        clearTimeout(timer);
        resolve([reply, blob]);
      });
      // the wire this page reads: a kernel of another answers "client_version"
      this.model.send({ type: "request", id, event, payload, wire: WIRE_VERSION });
    });
  }

  async api(method: string, path: string, body?: unknown): Promise<ApiReply> {
    return (await this.request("api", { method, path, body }, 60000)) as ApiReply;
  }

  edited(doc: GraphDocument) {
    this.model.set("document", doc);
    this.model.save_changes();
  }

  onDocument(handler: (doc: GraphDocument) => void) {
    this.documentHandlers.push(handler);
  }

  close() {
    this.model.off("msg:custom", this.listener as never);
  }

  private receive(msg: Message, blob?: Buffer) {
    if (msg.type === "reply" && msg.id !== undefined) {
      this.waiting.get(msg.id)?.(msg.data, blob);
      this.waiting.delete(msg.id);
    } else if (msg.type === "event" && msg.event) {
      this.dispatch(msg.event, blob ? [msg.data, blob] : [msg.data]);
    } else if (msg.type === "document" && msg.document) {
      for (const h of this.documentHandlers) h(msg.document);
    }
  }

  private dispatch(event: string, args: unknown[]) {
    for (const h of this.handlers.get(event) ?? []) h(...args);
  }
}
