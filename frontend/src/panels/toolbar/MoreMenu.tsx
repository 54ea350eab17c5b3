// The toolbar's less-used commands behind one "More ▾" button, so the toolbar stays one row at
// 1280 px: the other ways to save and share a graph, and auto-layout (also the L key). The
// upload's file input stays in the toolbar itself (tests and scripts set files on it directly);
// the menu's Upload… opens its file picker.
// In presenter mode the toolbar keeps only what a lesson presses (styles.css): the teach
// commands a projector at 1024 px has no room for (Classroom, no_grad, Help) move in here, so
// nothing is ever off screen. Keyboard: the first item takes the focus, ↑/↓ move, Escape
// closes and gives the focus back to More.
import { type KeyboardEvent, type RefObject, useCallback, useEffect, useRef, useState } from "react";
import type { DialogName } from "../dialogs/dialogName";
import { downloadDocument, saveToServer, uploadDocument } from "../../doc/files";
import { usePopover } from "./usePopover";
import { askToMake } from "../../store/modules";
import { useRun } from "../../store/run";
import { useOverlay } from "../../store/overlay";

/** ↑/↓ (and Home/End) between a menu's items, wrapping around. */
function moveFocus(e: KeyboardEvent<HTMLDivElement>) {
  const items = [...e.currentTarget.querySelectorAll<HTMLElement>('[role^="menuitem"]')];
  const at = items.indexOf(document.activeElement as HTMLElement);
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[e.key];
  if (to === undefined || !items.length) return;
  e.preventDefault();
  items[(to + items.length) % items.length].focus();
}

export default function MoreMenu(props: { open: (d: DialogName) => void; layout: () => void; presenter?: boolean }) {
  const [shown, setShown] = useState(false);
  const noGrad = useRun((s) => Boolean(s.options.no_grad));
  const following = useRun((s) => s.following);
  const opener = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const upload = useRef<HTMLInputElement>(null);
  const close = useCallback(() => setShown(false), []);
  // opened: the first item takes the focus; closed by Escape: back to the opener
  useEffect(() => {
    if (shown) menu.current?.querySelector<HTMLElement>('[role^="menuitem"]')?.focus();
  }, [shown]);
  // each item closes the menu, then acts
  const item = (label: string, act: () => void, title?: string) => (
    <button
      type="button"
      role="menuitem"
      title={title}
      onClick={() => {
        close();
        act();
      }}
    >
      {label}
    </button>
  );
  return (
    <>
      <button
        ref={opener}
        type="button"
        className="more-opener"
        aria-label="More"
        aria-haspopup="menu"
        aria-expanded={shown}
        onClick={() => setShown(!shown)}
        title="save as new, download, upload, export, import, auto-layout"
      >
        More ▾
      </button>
      <input
        ref={upload}
        type="file"
        accept=".json,application/json"
        aria-label="upload a graph document"
        hidden
        onChange={(e) => {
          const f = e.target.files?.[0];
          if (f) uploadDocument(f);
          e.target.value = "";
        }}
      />
      {shown && <Menu menu={menu} opener={opener} close={close} />}
      {shown && (
        <div
          className="popover toolbar-menu"
          role="menu"
          aria-label="more commands"
          ref={menu}
          onKeyDown={(e) => {
            if (e.key === "Escape") opener.current?.focus();
            moveFocus(e);
          }}
        >
          {props.presenter && (
            <>
              {item("Classroom…", () => props.open("classroom"), "start or share a room")}
              {!following && (
                <button
                  type="button"
                  role="menuitemcheckbox"
                  aria-checked={noGrad}
                  title="run the forward pass under torch.no_grad()"
                  onClick={() => {
                    close();
                    useRun.getState().setOption("no_grad", !noGrad);
                  }}
                >
                  {noGrad ? "✓ " : ""}no_grad
                </button>
              )}
              {item("Help", () => props.open("help"), "?")}
              <hr />
            </>
          )}
          {item("Save as new", () => saveToServer(true))}
          {item("Download", downloadDocument, "the graph as a .json file")}
          {item("Upload…", () => upload.current?.click(), "open a .json graph file")}
          {item("Export", () => props.open("export"), "as engine or PyTorch code")}
          {item("Import", () => props.open("import"), "a PyTorch script, read without running it")}
          <hr />
          {item("Auto-layout", props.layout, "L")}
          {item("Make module…", askToMake, "the selected nodes as one node (Ctrl+G)")}
          {item(
            "Overlay…",
            () => useOverlay.getState().setStat(useOverlay.getState().stat ?? "grad"),
            "colour the graph by gradient norm, value range, dead ReLUs or update size",
          )}
        </div>
      )}
    </>
  );
}

/** The open menu's closing rules (Escape, a press outside), in a component of its own so they
 * are only listened for while it is open. */
function Menu(props: {
  menu: RefObject<HTMLDivElement | null>;
  opener: RefObject<HTMLButtonElement | null>;
  close: () => void;
}) {
  usePopover(props.menu, props.close, props.opener);
  return null;
}
