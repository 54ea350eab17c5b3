// The keyboard shortcuts (listed for users in panels/dialogs/HelpPanel.tsx).
import { type RefObject, useEffect } from "react";
import { saveToServer } from "./doc/files";
import { runBackward } from "./panels/toolbar/RunControls";
import { useEditor } from "./store/editor";
import { askToMake, unpack } from "./store/modules";
import { useRun } from "./store/run";

/** Where the editor's keys are heard: on a page, the whole window; in a notebook widget (the
 * editor in a shadow root, widget.tsx), only keys typed inside it, so that a key meant for the
 * notebook (its command mode's `l`, `a`, Ctrl+Enter...) does not also act on the graph. */
export function keyScope(app: Element | null): { target: EventTarget; root: Document | ShadowRoot } {
  const root = app?.getRootNode();
  return root instanceof ShadowRoot ? { target: root, root } : { target: window, root: document };
}

/** Whether a key was typed into a field. Its first target: seen from outside a shadow root, the
 * event's target is the shadow's host, not the field inside it. */
export function typedInField(e: Event): boolean {
  const first = e.composedPath()[0];
  return first instanceof Element && first.closest("input, textarea, select, [contenteditable=true]") !== null;
}

/** In a shadow root, a key that removes the focused element (Delete on the picked node, an
 * undo) would leave the focus on the notebook's page, out of the editor's hearing: it goes back
 * to the editor's focusable frame (widget.tsx). */
function keepFocus(root: ShadowRoot, app: HTMLElement | null) {
  setTimeout(() => {
    if (!root.activeElement) app?.closest<HTMLElement>("[tabindex]")?.focus({ preventScroll: true });
  });
}

export function useShortcuts(
  actions: { layout: () => void; fit: () => void; help: () => void },
  app: RefObject<HTMLElement | null>,
) {
  useEffect(() => {
    const { target, root } = keyScope(app.current);
    const onKey = (e: KeyboardEvent) => {
      if (typedInField(e)) return;
      if (root.querySelector("[role=dialog][aria-modal=true]")) return;
      if (root instanceof ShadowRoot) keepFocus(root, app.current);
      const ed = useEditor.getState();
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      const handled = () => e.preventDefault();
      if (mod && key === "enter") {
        handled();
        if (useRun.getState().following) return; // the room's owner runs (store/room.ts)
        if (e.shiftKey) runBackward();
        else useRun.getState().start("forward");
      } else if (mod && key === "z") {
        handled();
        if (e.shiftKey) ed.redo();
        else ed.undo();
      } else if (mod && key === "y") {
        handled();
        ed.redo();
      } else if (mod && key === "c") ed.copySelection();
      else if (mod && key === "v") ed.paste();
      else if (mod && key === "d") {
        handled();
        ed.duplicateSelection();
      } else if (mod && key === "g") {
        handled();
        const picked = ed.nodes.filter((n) => n.selected);
        if (!e.shiftKey) askToMake();
        else if (picked.length === 1 && picked[0].data.op === "module") unpack(picked[0].id);
        else ed.notify("select one module instance to unpack", "error");
      } else if (mod && key === "a") {
        handled();
        ed.select(ed.nodes.map((n) => n.id));
      } else if (mod && key === "s") {
        handled();
        saveToServer();
      } else if (!mod && (key === "delete" || key === "backspace")) {
        handled();
        ed.deleteSelection();
      } else if (!mod && key === "f") actions.fit();
      else if (!mod && key === "l") actions.layout();
      else if (e.key === "?") actions.help();
    };
    target.addEventListener("keydown", onKey as EventListener);
    return () => target.removeEventListener("keydown", onKey as EventListener);
  }, [actions, app]);
}
