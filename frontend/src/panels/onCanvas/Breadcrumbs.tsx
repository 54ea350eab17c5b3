// Where the canvas is: the graph, or a module opened from it (Graph › l1 (Affine) › …). Each
// crumb but the last goes back out to that level. Opening a module fits it to the view; going
// back out shows the level as it was left (its pan and zoom).
import { useReactFlow, type Viewport } from "@xyflow/react";
import { useEffect, useRef } from "react";
import { useShallow } from "zustand/react/shallow";
import { useReadableFit } from "../../canvas/fit";
import { OPEN_FIT } from "../../canvas/showOpened";
import { useEditor } from "../../store/editor";
import { closeTo, useScope } from "../../store/modules";

/** Fits each level shown to the view, or gives a level gone back to its view as it was. */
function useLevelView() {
  const scope = useScope();
  const opened = useEditor((s) => s.opened);
  const { getViewport, setViewport } = useReactFlow();
  const fit = useReadableFit();
  const views = useRef(new Map<string, Viewport>());
  const last = useRef({ scope, opened });
  useEffect(() => {
    const was = last.current;
    last.current = { scope, opened };
    if (was.opened !== opened) {
      views.current.clear(); // another document: showOpened.ts fits it
      return;
    }
    if (was.scope === scope) return;
    views.current.set(was.scope, getViewport());
    const saved = views.current.get(scope);
    // after React Flow has taken the level's nodes into its store
    requestAnimationFrame(() => (saved ? setViewport(saved) : fit(OPEN_FIT)));
  }, [scope, opened, fit, getViewport, setViewport]);
}

export default function Breadcrumbs() {
  useLevelView();
  const open = useEditor(useShallow((s) => (s.meta.open ?? []).map((f) => `${f.instance}\u0000${f.module}`)));
  if (!open.length) return null;
  const crumbs = open.map((f) => f.split("\u0000") as [string, string]);
  const module = crumbs[crumbs.length - 1][1];
  return (
    <nav className="breadcrumbs" aria-label="breadcrumbs" title={`editing ${module}: every instance of it changes`}>
      <button type="button" onClick={() => closeTo(0)} title="back to the graph">
        Graph
      </button>
      {crumbs.map(([instance, name], i) => (
        <span key={i}>
          <span className="crumb-sep" aria-hidden>
            ›
          </span>
          {i === crumbs.length - 1 ? (
            <strong aria-current="location">
              {instance} <span className="muted">({name})</span>
            </strong>
          ) : (
            <button type="button" onClick={() => closeTo(i + 1)}>
              {instance} <span className="muted">({name})</span>
            </button>
          )}
        </span>
      ))}
    </nav>
  );
}
