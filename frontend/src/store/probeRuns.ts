// Forward runs the page makes for itself and does not show (a finite-difference check's two:
// store/fdCheck.ts), one at a time. Their packets reach the connection after the shown run's
// stream has passed on them; only the end matters (the values are fetched from the finished
// run, as the tensor view does). One per run store (store/run.ts).
import { AckedStream } from "../api/ackedStream";
import type { Connection } from "../api/socket";
import type { GraphDocument, RunFinished, TraceRecord } from "../api/types";

export type RunPacket = { records: TraceRecord[] } | { finished: RunFinished };

export class ProbeRuns {
  private id: string | null = null;
  private done: ((finished: RunFinished) => void) | null = null;
  private readonly stream = new AckedStream<RunPacket>(
    () => this.id,
    (p) => {
      if ("finished" in p) this.done?.(p.finished);
    },
  );

  constructor(private readonly connection: () => Connection) {}

  /** A packet the shown run's stream did not take: whether it was a probe's. */
  receive(runId: string, packet: RunPacket): boolean {
    return this.stream.receive(runId, packet);
  }

  /** Run `doc` forward without showing it; resolves with the finished run's id, whose tensors
   * can then be fetched; rejects with the refusal or the run's error. */
  async forward(doc: GraphDocument): Promise<string> {
    const done = new Promise<RunFinished>((resolve) => (this.done = resolve));
    try {
      const ack = await this.stream.request(
        () => this.connection().run(doc, "forward"),
        (a) => ("error" in a ? null : (this.id = a.run_id)),
      );
      if ("error" in ack) throw new Error(ack.error);
      const finished = await done;
      if (finished.status !== "ok") throw new Error(finished.error?.message ?? `the run was ${finished.status}`);
      return finished.run_id;
    } finally {
      this.id = null;
      this.done = null;
    }
  }
}
