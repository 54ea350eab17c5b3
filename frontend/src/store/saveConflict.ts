// Saving over a stored graph that someone else saved in between (docs/protocol.md, "Save
// conflicts"): every save names the revision it was based on; the server refuses one based on
// an old head with 409 and the head's number, and this store holds that until the person picks
// "Keep mine as a new revision" (the same graph saved again, based on the head, so theirs stays
// in the history) or "Open theirs" (the head loaded). panels/dialogs/SaveConflict.tsx shows it.
import { create } from "zustand";
import { api, ApiError } from "../api/http";
import { useEditor } from "./editor";
import { useRun } from "./run";

export type SaveConflict = {
  graphId: string;
  base: number | null; // the revision this page's copy was based on
  head: number; // the revision someone else saved, now the newest
  message: string; // the server's words
};

type State = {
  conflict: SaveConflict | null;
  busy: boolean; // a choice is being carried out: the buttons wait
  show(conflict: SaveConflict): void;
  close(): void;
  keepMine(): Promise<void>;
  openTheirs(): Promise<void>;
};

/** Save the open graph as a new revision of `graphId`, based on `base` (the revision it was
 * opened at or last saved as). A 409 opens the conflict; other failures are a notice. */
export async function saveRevision(graphId: string, base: number | null): Promise<boolean> {
  const ed = useEditor.getState();
  try {
    const info = await api.save(graphId, ed.document(), base);
    useEditor.getState().markSaved(info.id, info.revision);
    ed.notify(`saved “${info.name}” as revision ${info.revision}`);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 409 && err.code === "conflict" && err.revision) {
      useSaveConflict.getState().show({ graphId, base, head: err.revision, message: err.message });
    } else ed.notify(`save failed: ${(err as Error).message}`, "error");
    return false;
  }
}

export const useSaveConflict = create<State>((set, get) => ({
  conflict: null,
  busy: false,
  show: (conflict) => set({ conflict, busy: false }),
  close: () => set({ conflict: null, busy: false }),

  async keepMine() {
    const c = get().conflict;
    if (!c || get().busy) return;
    get().close(); // at once: a second click finds nothing to do
    // based on the head they told us: saved unless yet another save came first, which opens
    // the question again with that one's number
    await saveRevision(c.graphId, c.head);
  },

  async openTheirs() {
    const c = get().conflict;
    if (!c || get().busy) return;
    set({ busy: true });
    try {
      const { doc, revision } = await api.storedGraph(c.graphId);
      // the person chose to leave their edits: no "discard unsaved changes?" after that
      useEditor.getState().load(doc, { graphId: c.graphId, revision: revision ?? c.head });
      useRun.getState().clear();
      useEditor.getState().notify(`opened revision ${revision ?? c.head}, the one saved last`);
      get().close();
    } catch (err) {
      set({ busy: false });
      useEditor.getState().notify(`cannot open the saved graph: ${(err as Error).message}`, "error");
    }
  },
}));
