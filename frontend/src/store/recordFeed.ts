// A run's records shown a frame's worth at a time: one trace packet can hold thousands, and
// folding them all into the annotation tables at once would re-render a thousand nodes and
// edges in one long frame. run_finished waits until its records are shown, so that "finished"
// means "on the screen". One feed per run store (store/run.ts), cleared when another run is
// shown or a run is refused.
import type { RunFinished, TraceRecord } from "../api/types";

/** How many records a frame folds in: keeps each frame's share of re-renders small. */
export const RECORDS_PER_FRAME = 150;

export class RecordFeed {
  private queue: TraceRecord[] = [];
  private finishedLater: RunFinished | null = null;
  private draining = false;

  /** `show`: fold one frame's batch in; `finish`: the run's end, once its records are shown. */
  constructor(
    private readonly show: (batch: TraceRecord[]) => void,
    private readonly finish: (finished: RunFinished) => void,
  ) {}

  push(records: TraceRecord[]) {
    this.queue = this.queue.concat(records);
    if (!this.draining) {
      this.draining = true;
      requestAnimationFrame(this.drain);
    }
  }

  finished(finished: RunFinished) {
    if (this.draining) this.finishedLater = finished;
    else this.finish(finished);
  }

  /** Another run is shown (or none): what was waiting is dropped. */
  clear() {
    this.queue = [];
    this.finishedLater = null;
  }

  private readonly drain = () => {
    const batch = this.queue.slice(0, RECORDS_PER_FRAME);
    this.queue = this.queue.slice(batch.length);
    this.show(batch);
    if (this.queue.length) {
      requestAnimationFrame(this.drain);
      return;
    }
    this.draining = false;
    if (this.finishedLater) {
      const f = this.finishedLater;
      this.finishedLater = null;
      this.finish(f);
    }
  };
}
