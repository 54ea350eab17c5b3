// The keyboard shortcuts (listed for users in panels/dialogs/HelpPanel.tsx).
import { useEffect } from "react";
import { saveToServer } from "./doc/files";
import { runBackward } from "./panels/toolbar/RunControls";
import { useEditor } from "./store/editor";
import { askToMake, unpack } from "./store/modules";
import { useRun } from "./store/run";

export function useShortcuts(actions: { layout: () => void; fit: () => void; help: () => void }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const el = e.target as HTMLElement;
      if (el.closest("input, textarea, select, [contenteditable=true]")) return;
      if (document.querySelector("[role=dialog][aria-modal=true]")) return;
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
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [actions]);
}
