// The toolbar's less-used commands behind one "More ▾" button, so the toolbar stays one row at
// 1280 px: the other ways to save and share a graph, and auto-layout (also the L key). The
// upload's file input stays in the toolbar itself (tests and scripts set files on it directly);
// the menu's Upload… opens its file picker.
import { type RefObject, useCallback, useRef, useState } from "react";
import type { DialogName } from "./Toolbar";
import { downloadDocument, saveToServer, uploadDocument } from "../doc/files";
import { usePopover } from "./usePopover";
import { askToMake } from "../store/modules";

export default function MoreMenu(props: { open: (d: DialogName) => void; layout: () => void }) {
  const [shown, setShown] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const upload = useRef<HTMLInputElement>(null);
  const close = useCallback(() => setShown(false), []);
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
        <div className="popover toolbar-menu" role="menu" aria-label="more commands" ref={menu}>
          {item("Save as new", () => saveToServer(true))}
          {item("Download", downloadDocument, "the graph as a .json file")}
          {item("Upload…", () => upload.current?.click(), "open a .json graph file")}
          {item("Export", () => props.open("export"), "as engine or PyTorch code")}
          {item("Import", () => props.open("import"), "a PyTorch script, read without running it")}
          <hr />
          {item("Auto-layout", props.layout, "L")}
          {item("Make module…", askToMake, "the selected nodes as one node (Ctrl+G)")}
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
