// Double-click on the canvas: type to find an op, Enter adds it where you clicked.
import { useMemo, useState } from "react";
import { useEditor } from "../store/editor";
import { matchOps } from "../panels/palette/matchOps";

export default function QuickAdd(props: {
  at: { x: number; y: number };
  onPick: (op: string) => void;
  onClose: () => void;
}) {
  const ops = useEditor((s) => s.opList);
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const found = useMemo(() => matchOps(ops, query).slice(0, 12), [ops, query]);
  return (
    <div className="quick-add" style={{ left: props.at.x, top: props.at.y }} role="dialog" aria-label="add an op">
      <input
        autoFocus
        aria-label="search ops to add"
        placeholder="add an op…"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onBlur={() => setTimeout(props.onClose, 150)}
        onKeyDown={(e) => {
          if (e.key === "Escape") props.onClose();
          else if (e.key === "ArrowDown") setActive((a) => Math.min(a + 1, found.length - 1));
          else if (e.key === "ArrowUp") setActive((a) => Math.max(a - 1, 0));
          else if (e.key === "Enter" && found[active]) props.onPick(found[active].name);
        }}
      />
      <ul role="listbox" aria-label="matching ops">
        {found.map((op, i) => (
          <li
            key={op.name}
            role="option"
            aria-selected={i === active}
            onMouseDown={(e) => {
              e.preventDefault();
              props.onPick(op.name);
            }}
          >
            <b>{op.name}</b> <span className="muted">{op.doc}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
