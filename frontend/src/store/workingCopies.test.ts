import { describe, expect, it } from "vitest";
import { KEPT, type KeyValue, readWorkingCopy, writeWorkingCopy } from "./workingCopies";

/** A Storage over a Map, as localStorage and sessionStorage behave. */
function storage(): KeyValue & { keys(): string[] } {
  const m = new Map<string, string>();
  return {
    getItem: (k) => m.get(k) ?? null,
    setItem: (k, v) => void m.set(k, String(v)),
    removeItem: (k) => void m.delete(k),
    keys: () => [...m.keys()],
  };
}

const copy = (name: string) => ({ doc: { format: "wiregrad.graph", name }, dirty: true });
const nameOf = (c: ReturnType<typeof readWorkingCopy>) => (c?.doc as { name: string } | undefined)?.name;

describe("working copies, one per tab", () => {
  it("two tabs keep their own: a reload of either gets its own graph back", () => {
    const local = storage();
    const tabA = storage();
    const tabB = storage();
    writeWorkingCopy(local, tabA, copy("A"), 1);
    writeWorkingCopy(local, tabB, copy("B"), 2);
    writeWorkingCopy(local, tabA, copy("A, edited"), 3);
    expect(nameOf(readWorkingCopy(local, tabA))).toBe("A, edited");
    expect(nameOf(readWorkingCopy(local, tabB))).toBe("B");
  });

  it("a new tab starts from the copy written last, and then keeps its own", () => {
    const local = storage();
    const tabA = storage();
    const tabB = storage();
    writeWorkingCopy(local, tabA, copy("A"), 1);
    writeWorkingCopy(local, tabB, copy("B"), 2);
    const fresh = storage();
    expect(nameOf(readWorkingCopy(local, fresh))).toBe("B");
    writeWorkingCopy(local, fresh, copy("C"), 3);
    expect(nameOf(readWorkingCopy(local, tabB))).toBe("B");
    expect(nameOf(readWorkingCopy(local, fresh))).toBe("C");
  });

  it("reads the single copy kept before copies were per tab, once", () => {
    const local = storage();
    local.setItem("wiregrad.working", JSON.stringify(copy("old")));
    const tab = storage();
    expect(nameOf(readWorkingCopy(local, tab))).toBe("old");
    writeWorkingCopy(local, tab, copy("new"), 1);
    expect(local.getItem("wiregrad.working")).toBeNull();
    expect(nameOf(readWorkingCopy(local, storage()))).toBe("new");
  });

  it("keeps the copies written last, the current tab's always", () => {
    const local = storage();
    const tabs = Array.from({ length: KEPT + 3 }, storage);
    tabs.forEach((tab, i) => writeWorkingCopy(local, tab, copy(`t${i}`), 100 + i));
    const kept = local.keys().filter((k) => k.startsWith("wiregrad.working."));
    expect(kept).toHaveLength(KEPT);
    expect(nameOf(readWorkingCopy(local, tabs[KEPT + 2]))).toBe(`t${KEPT + 2}`);
    expect(nameOf(readWorkingCopy(local, tabs[3]))).toBe("t3"); // the oldest kept
    expect(nameOf(readWorkingCopy(local, tabs[2]))).toBe(`t${KEPT + 2}`); // t2 went: the last one
    // a tab whose copy went writes again: its copy is back, and the oldest other (t3) goes
    writeWorkingCopy(local, tabs[0], copy("t0 again"), 200);
    expect(nameOf(readWorkingCopy(local, tabs[0]))).toBe("t0 again");
    expect(nameOf(readWorkingCopy(local, tabs[3]))).toBe("t0 again");
    expect(local.keys().filter((k) => k.startsWith("wiregrad.working."))).toHaveLength(KEPT);
  });

  it("ignores what is not a copy", () => {
    const local = storage();
    const tab = storage();
    local.setItem("wiregrad.working", "{not json");
    expect(readWorkingCopy(local, tab)).toBeNull();
    local.setItem("wiregrad.working-index", JSON.stringify({ "wiregrad.working.gone": 1 }));
    expect(readWorkingCopy(local, tab)).toBeNull();
  });
});
