// Where the editor runs: a page served by `wiregrad serve` (Socket.IO and fetch to /api), or a
// notebook widget (wiregrad.show), where one channel to the kernel carries both. The widget
// entry (widget.tsx) sets its channel before the editor starts; the page sets none.
import type { GraphDocument } from "./types";

/** What socket.ts uses of socket.io-client's Socket; the widget's channel implements it. */
export interface SocketLike {
  connected: boolean;
  on(event: string, handler: (...args: never[]) => void): unknown;
  off(event: string, handler: (...args: never[]) => void): unknown;
  timeout(ms: number): { emit(event: string, payload: unknown, ack: (err: Error | null, reply: never) => void): unknown };
  emit(event: string, ...args: unknown[]): unknown;
}

export interface ApiReply {
  status: number;
  data: unknown;
  headers: Record<string, string>;
}

export interface HostChannel {
  socket: SocketLike;
  /** One call of the JSON API (http.ts), answered by the kernel. */
  api(method: string, path: string, body?: unknown): Promise<ApiReply>;
  /** A view with nothing behind it (an exported HTML file): it shows the graph and the run it
   * was saved with, and runs nothing (the run buttons stay disabled, no banner says why). */
  readOnly: boolean;
  /** The document to open, instead of the working copy or a template. */
  document: GraphDocument | null;
  /** Called with the document after every edit (the kernel's `w.document`). */
  edited(doc: GraphDocument): void;
  /** Subscribe to documents the kernel sends (`w.document = ...`, `w.load(...)`). */
  onDocument(handler: (doc: GraphDocument) => void): void;
}

// The one channel of the editor in a notebook: set by the widget entry before the editor
// starts, taken back when the widget goes (widget.tsx); none on a page.
let channel: HostChannel | null = null;

export function setHostChannel(c: HostChannel | null) {
  channel = c;
}

export function hostChannel(): HostChannel | null {
  return channel;
}
