// The op palette, built from GET /api/ops: grouped by category, filtered by a search box.
// Drag an op onto the canvas (or press Enter on it to add it in the middle of the view).
import { hostChannel } from "../../api/host";
import { useReactFlow } from "@xyflow/react";
import { useMemo, useState } from "react";
import type { OpSpec } from "../../api/types";
import { DRAG_TYPE } from "../../canvas/dragTypes";
import { useEditor } from "../../store/editor";
import { useRun } from "../../store/run";
import PaletteLibrary from "./PaletteLibrary";
import { matchOps } from "./matchOps";
import PaletteModules, { useModuleNames } from "./PaletteModules";

export default function Palette() {
  const following = useRun((s) => s.following);
  return following ? (
    <nav className="palette following" aria-label="op palette">
      {hostChannel()?.readOnly ? (
        <p className="muted">A saved view: the graph and its last run, as they were exported from a notebook.</p>
      ) : (
        <p className="muted">
          You follow a room: the graph is your teacher&apos;s. <strong>Fork</strong> (top right) gives you a copy to
          edit.
        </p>
      )}
    </nav>
  ) : (
    <OpPalette />
  );
}

function OpPalette() {
  const ops = useEditor((s) => s.opList);
  const [query, setQuery] = useState("");
  const { screenToFlowPosition } = useReactFlow();
  const modules = useModuleNames(query); // the document's own, listed under "modules"
  const groups = useMemo(() => {
    const out = new Map<string, OpSpec[]>();
    for (const op of matchOps(ops, query)) {
      const list = out.get(op.category) ?? [];
      list.push(op);
      out.set(op.category, list);
    }
    if (modules.length && !out.has("modules")) out.set("modules", []);
    return [...out.entries()];
  }, [ops, query, modules]);

  const centre = () => {
    const el = document.querySelector(".canvas")?.getBoundingClientRect();
    return el ? screenToFlowPosition({ x: el.x + el.width / 2, y: el.y + el.height / 2 }) : { x: 0, y: 0 };
  };
  const addAtCentre = (op: string) => useEditor.getState().addNode(op, centre());

  return (
    <nav className="palette" aria-label="op palette">
      <input
        type="search"
        aria-label="search ops"
        placeholder="search ops…"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {groups.map(([category, list]) => (
        <section key={category} aria-label={category}>
          <h3>{category}</h3>
          <ul>
            {category === "modules" && <PaletteModules names={modules} centre={centre} />}
            {list.map((op) => (
              <li
                key={op.name}
                className="palette-op"
                draggable
                tabIndex={0}
                role="button"
                aria-label={`op ${op.name}`}
                title={op.doc}
                onDragStart={(e) => {
                  e.dataTransfer.setData(DRAG_TYPE, op.name);
                  e.dataTransfer.setData("text/plain", op.name);
                  e.dataTransfer.effectAllowed = "copy";
                }}
                onKeyDown={(e) => e.key === "Enter" && addAtCentre(op.name)}
                onDoubleClick={() => addAtCentre(op.name)}
              >
                {op.name}
              </li>
            ))}
          </ul>
        </section>
      ))}
      {!groups.length && <p className="muted">no op matches “{query}”</p>}
      <PaletteLibrary query={query} centre={centre} />
    </nav>
  );
}
