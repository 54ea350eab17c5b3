// Someone else saved this graph after this page opened it (store/saveConflict.ts): what
// happened, in the server's words, and the two ways out. Neither loses anything: keeping mine
// saves it as the newest revision with theirs one below in the history; opening theirs drops
// the unsaved edits on this page (never saved anywhere), so the dialog says so before.
import { useSaveConflict } from "../../store/saveConflict";
import Dialog from "./Dialog";

export default function SaveConflict() {
  const conflict = useSaveConflict((s) => s.conflict);
  const busy = useSaveConflict((s) => s.busy);
  if (!conflict) return null;
  const { close, keepMine, openTheirs } = useSaveConflict.getState();
  const yours = conflict.base ? `revision ${conflict.base}` : "the revision you opened";
  return (
    <Dialog title="Someone else saved this graph" onClose={close}>
      <p role="alert">
        Revision {conflict.head} was saved after {yours}, which your changes are based on. Nothing
        of yours was saved yet.
      </p>
      <ul className="conflict-choices">
        <li>
          <b>Keep mine as a new revision</b>: yours becomes revision {conflict.head + 1}; theirs stays
          in the history as revision {conflict.head}.
        </li>
        <li>
          <b>Open theirs</b>: revision {conflict.head} replaces what is on the canvas; your unsaved
          changes are dropped.
        </li>
      </ul>
      <p className="dialog-buttons">
        <button type="button" className="primary" disabled={busy} onClick={() => void keepMine()}>
          Keep mine as a new revision
        </button>{" "}
        <button type="button" disabled={busy} onClick={() => void openTheirs()}>
          Open theirs
        </button>{" "}
        <button type="button" disabled={busy} onClick={close}>
          Cancel
        </button>
      </p>
    </Dialog>
  );
}
