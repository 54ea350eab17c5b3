// The canvas's context menu (right-click a node or the selection): make a module of the
// selected nodes; open, unpack, expand in place or collapse a module instance.
import { useEffect, useRef } from "react";
import { useEditor } from "../store/editor";
import { useExpanded } from "../store/expandedModules";
import { askToMake, openInstance, unpack, useScope } from "../store/modules";
import { runKey } from "../doc/modules";

export interface MenuAt {
  x: number; // px, in the canvas
  y: number;
  node: string | null; // the node right-clicked (null: the selection)
}

export default function ModuleMenu({ at, onClose }: { at: MenuAt; onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const isModule = useEditor((s) => !!at.node && s.nodes.find((n) => n.id === at.node)?.data.op === "module");
  const key = runKey(useScope(), at.node ?? "");
  const expanded = useExpanded((s) => s.keys.has(key));
  useEffect(() => {
    const away = (e: Event) => !ref.current?.contains(e.target as Node) && onClose();
    const esc = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    window.addEventListener("pointerdown", away);
    window.addEventListener("keydown", esc);
    return () => {
      window.removeEventListener("pointerdown", away);
      window.removeEventListener("keydown", esc);
    };
  }, [onClose]);
  const item = (label: string, act: () => void, hint?: string) => (
    <button
      type="button"
      role="menuitem"
      onClick={() => {
        onClose();
        act();
      }}
    >
      {label}
      {hint && <kbd>{hint}</kbd>}
    </button>
  );
  return (
    <div ref={ref} className="popover node-menu" role="menu" aria-label="node commands" style={{ left: at.x, top: at.y }}>
      {item("Make module…", askToMake, "Ctrl+G")}
      {isModule && item("Open module", () => openInstance(at.node!), "double-click")}
      {isModule && item("Unpack module", () => unpack(at.node!), "Ctrl+Shift+G")}
      {isModule && item(expanded ? "Collapse" : "Expand in place", () => useExpanded.getState().toggle(key), expanded ? "▾" : "▸")}
    </div>
  );
}
