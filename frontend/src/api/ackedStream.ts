// A stream of packets that a request starts and whose ack names it (a run's `run_id`, a
// training's `train_id`). The server starts the stream before it answers, so a stream's first
// packets (even all of them, for a short one) can overtake the ack: while an ack is awaited,
// packets of ids this page does not know yet are held, in order; the ack's id replays its own,
// the rest are dropped. Used by store/run.ts and store/training.ts.

export class AckedStream<P> {
  private pending = 0; // requests whose ack has not come yet
  private held: { id: string; packet: P }[] = [];

  /** `current`: the id of the stream this page shows now (null: none); `apply`: show one of
   * its packets. */
  constructor(
    private readonly current: () => string | null,
    private readonly apply: (packet: P, id: string) => void,
  ) {}

  /** A packet of stream `id`: applied if it is the current stream's, held while an ack is
   * awaited, else dropped (a stopped stream's late packet, or another page's). Returns
   * whether it was taken (applied or held). */
  receive(id: string, packet: P): boolean {
    if (id === this.current()) {
      this.apply(packet, id);
      return true;
    }
    if (this.pending) {
      this.held.push({ id, packet });
      return true;
    }
    return false;
  }

  /** Send a request whose ack names a stream. `start(ack)` runs as the ack arrives: it makes
   * the ack's stream the current one and returns its id, or returns null (refused); then the
   * packets of that id that came before the ack are applied, in order. A request that fails
   * (throws) holds nothing back either. */
  async request<A>(send: () => Promise<A>, start: (ack: A) => string | null): Promise<A> {
    this.pending++;
    let ack: A;
    try {
      ack = await send();
    } catch (err) {
      this.settle(null);
      throw err;
    }
    let id: string | null = null;
    try {
      id = start(ack);
    } finally {
      this.settle(id);
    }
    return ack;
  }

  /** An ack is in (or failed): take out its id's held packets and apply them; drop the rest
   * once no other request is waiting for its ack. */
  private settle(id: string | null) {
    this.pending--;
    const mine = this.held.filter((h) => h.id === id);
    this.held = this.pending ? this.held.filter((h) => h.id !== id) : [];
    for (const { packet } of mine) this.apply(packet, id!);
  }
}
