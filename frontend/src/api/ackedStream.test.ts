// The acked stream against a hand-driven "server": packets of a stream can come before the ack
// that names it, after it, from a stream that is over, or for a request that fails.
import { describe, expect, it } from "vitest";
import { AckedStream } from "./ackedStream";

type Ack = { id?: string; error?: string };

/** A stream whose current id is set by the ack, and a record of what it applied. */
function setup() {
  const shown: string[] = [];
  let current: string | null = null;
  const stream = new AckedStream<string>(
    () => current,
    (packet, id) => shown.push(`${id}:${packet}`),
  );
  const start = (ack: Ack) => {
    if (!ack.id) return null;
    current = ack.id;
    return ack.id;
  };
  // a request whose ack the test sends when it likes
  const request = () => {
    let answer!: (ack: Ack) => void;
    let fail!: (err: Error) => void;
    const sent = new Promise<Ack>((resolve, reject) => {
      answer = resolve;
      fail = reject;
    });
    const done = stream.request(() => sent, start);
    return { answer, fail, done };
  };
  return { stream, shown, request, setCurrent: (id: string | null) => (current = id) };
}

describe("acked stream", () => {
  it("applies the packets that came before the ack, in order, once the ack names them", async () => {
    const { stream, shown, request } = setup();
    const r = request();
    expect(stream.receive("r1", "a")).toBe(true);
    expect(stream.receive("r1", "b")).toBe(true);
    expect(shown).toEqual([]); // held: nobody knows r1 yet
    r.answer({ id: "r1" });
    expect(await r.done).toEqual({ id: "r1" });
    expect(shown).toEqual(["r1:a", "r1:b"]);
  });

  it("applies packets after the ack as they come", async () => {
    const { stream, shown, request } = setup();
    const r = request();
    stream.receive("r1", "a");
    r.answer({ id: "r1" });
    await r.done;
    expect(stream.receive("r1", "b")).toBe(true);
    expect(stream.receive("r1", "c")).toBe(true);
    expect(shown).toEqual(["r1:a", "r1:b", "r1:c"]);
  });

  it("drops a stale stream's packets, held or late", async () => {
    const { stream, shown, request } = setup();
    const r = request();
    stream.receive("old", "x"); // a stopped stream's, held while the ack is awaited
    stream.receive("r2", "a");
    r.answer({ id: "r2" });
    await r.done;
    expect(stream.receive("old", "y")).toBe(false); // once the ack is in: dropped at once
    expect(shown).toEqual(["r2:a"]);
    // nor does a later stream of that id find them
    const again = request();
    again.answer({ id: "old" });
    await again.done;
    expect(shown).toEqual(["r2:a"]);
  });

  it("drops the held packets of a refused or failed request", async () => {
    const { stream, shown, request } = setup();
    const refused = request();
    stream.receive("r3", "a");
    refused.answer({ error: "the graph has 1 problem" });
    await refused.done;
    const failed = request();
    stream.receive("r4", "a");
    failed.fail(new Error("not connected to the server"));
    await expect(failed.done).rejects.toThrow("not connected");
    // the ids turn up later: nothing of theirs was kept
    const late = request();
    late.answer({ id: "r3" });
    await late.done;
    stream.receive("r4", "b");
    expect(shown).toEqual([]);
  });

  it("after a cancel, the cancelled stream's late packets are dropped and the next one shown", async () => {
    const { stream, shown, request, setCurrent } = setup();
    const first = request();
    first.answer({ id: "r5" });
    await first.done;
    stream.receive("r5", "a");
    setCurrent(null); // cancelled: the page shows no stream
    const next = request();
    stream.receive("r5", "late"); // the cancelled run's last packet, held with the rest
    stream.receive("r6", "a");
    next.answer({ id: "r6" });
    await next.done;
    expect(stream.receive("r5", "later")).toBe(false);
    expect(shown).toEqual(["r5:a", "r6:a"]);
  });

  it("keeps a second request's packets while the first one's ack comes in", async () => {
    const { stream, shown, request } = setup();
    const one = request();
    const two = request();
    stream.receive("r7", "a");
    stream.receive("r8", "a");
    one.answer({ id: "r7" });
    await one.done;
    two.answer({ id: "r8" });
    await two.done;
    expect(shown).toEqual(["r7:a", "r8:a"]);
  });
});
