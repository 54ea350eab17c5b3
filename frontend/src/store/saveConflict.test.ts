// Saves that name their base revision, against a fake store with the server's rule: a save
// based on anything but the head is a 409 with the head's number (docs/protocol.md).
import { beforeEach, describe, expect, it, vi } from "vitest";
import { create } from "zustand";
import type { GraphDocument } from "../api/types";

const server = vi.hoisted(() => ({
  revisions: [] as GraphDocument[], // revision n is revisions[n - 1]
  saves: [] as (number | null | undefined)[], // the base each PUT named
}));

vi.mock("../api/http", async (importActual) => {
  const actual = await importActual<typeof import("../api/http")>();
  const info = (rev: number) => ({ id: "g1", name: server.revisions[rev - 1].name, created: 0, updated: 0, revision: rev });
  return {
    ...actual,
    api: {
      save: async (_id: string, graph: GraphDocument, base?: number | null) => {
        server.saves.push(base);
        const head = server.revisions.length;
        if (base != null && base !== head)
          throw new actual.ApiError(`revision ${head} was saved after the revision ${base}`, 409, [], null, "conflict", head);
        server.revisions.push(graph);
        return info(head + 1);
      },
      storedGraph: async () => ({ doc: server.revisions.at(-1)!, revision: server.revisions.length }),
    },
  };
});

vi.mock("./run", () => ({ useRun: create(() => ({ clear: () => {} })) }));

import { emptyDocument } from "../doc/convert";
import { useEditor } from "./editor";
import { saveRevision, useSaveConflict } from "./saveConflict";

const named = (name: string): GraphDocument => ({ ...emptyDocument(), name });
const ed = () => useEditor.getState();
const conflict = () => useSaveConflict.getState().conflict;

describe("save conflicts", () => {
  beforeEach(() => {
    server.revisions = [named("start")];
    server.saves = [];
    useSaveConflict.getState().close();
    ed().load(named("mine"), { graphId: "g1", revision: 1, dirty: true });
  });

  it("names the base on every save and moves it on with each saved revision", async () => {
    expect(await saveRevision("g1", ed().revision)).toBe(true);
    expect(ed().revision).toBe(2);
    expect(ed().dirty).toBe(false);
    expect(await saveRevision("g1", ed().revision)).toBe(true);
    expect(server.saves).toEqual([1, 2]);
    expect(conflict()).toBeNull();
  });

  it("a save on an old base opens the conflict and changes nothing", async () => {
    server.revisions.push(named("theirs")); // someone else saved revision 2
    expect(await saveRevision("g1", 1)).toBe(false);
    expect(conflict()).toMatchObject({ graphId: "g1", base: 1, head: 2 });
    expect(server.revisions.map((d) => d.name)).toEqual(["start", "theirs"]);
    expect(ed().dirty).toBe(true);
    expect(ed().revision).toBe(1);
    expect(ed().meta.name).toBe("mine");
  });

  it("keep mine saves again based on the head: both stay in the history", async () => {
    server.revisions.push(named("theirs"));
    await saveRevision("g1", 1);
    await useSaveConflict.getState().keepMine();
    expect(conflict()).toBeNull();
    expect(server.saves).toEqual([1, 2]);
    expect(server.revisions.map((d) => d.name)).toEqual(["start", "theirs", "mine"]);
    expect(ed().revision).toBe(3);
    expect(ed().dirty).toBe(false);
  });

  it("keep mine asks again when yet another save came first", async () => {
    server.revisions.push(named("theirs"));
    await saveRevision("g1", 1);
    server.revisions.push(named("a third person's"));
    await useSaveConflict.getState().keepMine();
    expect(conflict()).toMatchObject({ base: 2, head: 3 });
    expect(server.revisions).toHaveLength(3);
  });

  it("open theirs loads the head and bases the next save on it", async () => {
    server.revisions.push(named("theirs"));
    await saveRevision("g1", 1);
    await useSaveConflict.getState().openTheirs();
    expect(conflict()).toBeNull();
    expect(ed().meta.name).toBe("theirs");
    expect(ed().revision).toBe(2);
    expect(ed().dirty).toBe(false);
    expect(await saveRevision("g1", ed().revision)).toBe(true);
    expect(server.saves.at(-1)).toBe(2);
  });

  it("cancel leaves the edits unsaved and the base as it was", async () => {
    server.revisions.push(named("theirs"));
    await saveRevision("g1", 1);
    useSaveConflict.getState().close();
    expect(conflict()).toBeNull();
    expect(ed().dirty).toBe(true);
    expect(ed().revision).toBe(1);
  });

  it("other failures are a notice, not the conflict", async () => {
    const { ApiError } = await import("../api/http");
    const { api } = await import("../api/http");
    const save = vi.spyOn(api, "save").mockRejectedValueOnce(new ApiError("the disk is full", 507, [], null, "store_full"));
    expect(await saveRevision("g1", 1)).toBe(false);
    expect(conflict()).toBeNull();
    save.mockRestore();
  });
});
