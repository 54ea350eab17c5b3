// Opening and saving documents: templates, the server's store, files on disk, and the working
// copy kept in the browser (one per tab: store/workingCopies.ts) so that a reload loses nothing.
import { api } from "../api/http";
import type { GraphDocument } from "../api/types";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import { saveRevision } from "../store/saveConflict";
import { useUploadReport } from "../store/uploadReport";
import { readWorkingCopy, writeWorkingCopy } from "../store/workingCopies";
import { checkUpload } from "./uploadCheck";

/** Replace the open graph, asking first when it has unsaved changes. */
export function openDocument(
  doc: GraphDocument,
  from: { graphId?: string | null; revision?: number | null } = {},
  ask = true,
): boolean {
  if (ask && useEditor.getState().dirty && !window.confirm("Discard the unsaved changes to this graph?"))
    return false;
  useEditor.getState().load(doc, from);
  useRun.getState().clear();
  return true;
}

export async function openTemplate(id: string, ask = true) {
  return openDocument(await api.template(id), {}, ask);
}

/** Save to the server's store: a new revision of the graph it came from (based on the revision
 * it was opened at or last saved as: someone else's save in between asks what to do,
 * store/saveConflict.ts), or a new graph. */
export async function saveToServer(asNew = false) {
  const ed = useEditor.getState();
  if (ed.graphId && !asNew) {
    await saveRevision(ed.graphId, ed.revision);
    return;
  }
  const doc = ed.document();
  try {
    const info = await api.create(doc);
    useEditor.getState().markSaved(info.id, info.revision);
    ed.notify(`saved “${info.name}” as revision ${info.revision}`);
  } catch (err) {
    ed.notify(`save failed: ${(err as Error).message}`, "error");
  }
}

export function downloadText(name: string, text: string, type = "application/json") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = Object.assign(document.createElement("a"), { href: url, download: name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function downloadDocument() {
  const doc = useEditor.getState().document();
  const file = `${(doc.name || "graph").replace(/[^\w.-]+/g, "-")}.json`;
  downloadText(file, JSON.stringify(doc, null, 2));
}

/** An uploaded file: read and checked (JSON, then the server's validation) before the open
 * graph is replaced; only a file that is a graph document gets as far as "Discard the unsaved
 * changes?". What is wrong with it is shown as a list (panels/dialogs/UploadReport.tsx). */
export async function uploadDocument(file: File) {
  const check = await checkUpload(await file.text(), (doc) => api.validate(doc));
  if (check.kind === "ok") openDocument(check.doc);
  else useUploadReport.getState().show({ file: file.name, check });
}

// The working copy: written shortly after each change, read back when the page loads.
// The page going away (reload, close, crash-free navigation) writes at once.
export function keepWorkingCopy() {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pending = false;
  const write = () => {
    clearTimeout(timer);
    if (!pending) return;
    pending = false;
    const st = useEditor.getState();
    const saved = { doc: st.document(), graphId: st.graphId, revision: st.revision, dirty: st.dirty };
    try {
      writeWorkingCopy(localStorage, sessionStorage, saved);
    } catch {
      /* storage full or disabled: the server store still works */
    }
  };
  const stop = useEditor.subscribe((s, prev) => {
    if (s.nodes === prev.nodes && s.edges === prev.edges && s.meta === prev.meta && s.dirty === prev.dirty)
      return;
    pending = true;
    clearTimeout(timer);
    timer = setTimeout(write, 300);
  });
  window.addEventListener("pagehide", write);
  return () => {
    stop();
    window.removeEventListener("pagehide", write);
  };
}

export function restoreWorkingCopy(): boolean {
  try {
    const saved = readWorkingCopy(localStorage, sessionStorage);
    const doc = saved?.doc as GraphDocument | undefined;
    if (!saved || doc?.format !== "wiregrad.graph") return false;
    useEditor.getState().load(doc, saved);
    return true;
  } catch {
    return false;
  }
}
