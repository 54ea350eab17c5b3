// The document's modules in the palette (category "modules"): drag one onto the canvas, or
// press Enter on it, for one more instance (each with the next seed: its own parameters);
// right-click it (or the menu key) to rename or delete the module.
import { useCallback, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import { MODULE_DRAG_TYPE } from "../../canvas/dragTypes";
import { useEditor } from "../../store/editor";
import { addInstance } from "../../store/modules";
import { ModuleDefMenu } from "../dialogs/ModuleDefDialog";

/** The names of the document's modules that match every word of `query`. */
export function useModuleNames(query: string) {
  return useEditor(
    useShallow((s) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      return (s.meta.modules ?? [])
        .filter((m) => words.every((w) => `${m.name} module ${m.doc ?? ""}`.toLowerCase().includes(w)))
        .map((m) => m.name);
    }),
  );
}

export default function PaletteModules({ names, centre }: { names: string[]; centre: () => { x: number; y: number } }) {
  const [menu, setMenu] = useState<{ name: string; x: number; y: number } | null>(null);
  const closeMenu = useCallback(() => setMenu(null), []);
  return (
    <>
      {menu && <ModuleDefMenu {...menu} onClose={closeMenu} />}
      {names.map((name) => (
        <li
          key={`module:${name}`}
          className="palette-op palette-module"
          draggable
          tabIndex={0}
          role="button"
          aria-label={`module ${name}`}
          aria-haspopup="menu"
          title={`an instance of the module ${name} (its own parameters); right-click to rename or delete it`}
          onContextMenu={(e) => {
            e.preventDefault();
            // the menu key gives no pointer position: the menu then opens at the entry
            const r = e.currentTarget.getBoundingClientRect();
            setMenu({ name, x: e.clientX || r.left, y: e.clientY || r.bottom });
          }}
          onDragStart={(e) => {
            e.dataTransfer.setData(MODULE_DRAG_TYPE, name);
            e.dataTransfer.effectAllowed = "copy";
          }}
          onKeyDown={(e) => e.key === "Enter" && addInstance(name, centre())}
          onDoubleClick={() => addInstance(name, centre())}
        >
          {name}
        </li>
      ))}
    </>
  );
}
