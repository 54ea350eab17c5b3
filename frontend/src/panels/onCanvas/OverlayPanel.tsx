// The overlay's panel on the canvas: which statistic colours the graph, its legend, and the
// ten worst nodes and edges (a click selects one and centres the view on it). Shown while an
// overlay is on (More ▸ Overlay…); closing it gives the canvas its usual colours back.
import { useReactFlow } from "@xyflow/react";
import { useEffect, useRef } from "react";
import { useReadableFit } from "../../canvas/fit";
import { OPEN_FIT } from "../../canvas/showOpened";
import { BAD_COLOUR, colourOf, OVERLAY_STATS, type OverlayStat, RAMP, type Score } from "../../canvas/overlayScores";
import { useEditor } from "../../store/editor";
import { nameOf } from "../../store/names";
import { useOverlay } from "../../store/overlay";
import { useRun } from "../../store/run";
import "./overlay.css";

const WORST = 10;

function edgeName(id: string): string {
  const e = useEditor.getState().edges.find((x) => x.id === id);
  return e ? `${nameOf(e.source)} → ${nameOf(e.target)}` : id;
}

export default function OverlayPanel() {
  const stat = useOverlay((s) => s.stat);
  const result = useOverlay((s) => s.result);
  const flow = useReactFlow();
  const shown = Boolean(stat && result);
  const panel = useRef<HTMLElement>(null);
  const fit = useReadableFit();
  // opened over nodes: the view is fitted to the canvas beside the panel (canvas/fit.ts keeps
  // the graph clear of it), so that the panel hides none of the graph
  useEffect(() => {
    if (!shown) return;
    const frame = requestAnimationFrame(() => {
      const box = panel.current?.getBoundingClientRect();
      const canvas = panel.current?.parentElement;
      if (!box || !canvas) return;
      const under = [...canvas.querySelectorAll(".react-flow__node")].some((n) => {
        const r = n.getBoundingClientRect();
        return r.left < box.right && box.left < r.right && r.top < box.bottom && box.top < r.bottom;
      });
      if (under) fit({ ...OPEN_FIT, duration: 300 });
    });
    return () => cancelAnimationFrame(frame);
  }, [shown, fit]);
  if (!stat || !result) return null;
  const about = OVERLAY_STATS.find((s) => s.id === stat);
  const worst = result.scores.slice(0, WORST);
  const bad = result.scores.some((s) => s.bad);
  const finite = result.scores.some((s) => !s.bad);

  const show = (s: Score) => {
    if (s.kind === "node") {
      // a node inside a module instance: the instance is what this canvas shows
      const nodes = useEditor.getState().nodes;
      const id = nodes.some((n) => n.id === s.id) ? s.id : s.id.split("/")[0];
      useEditor.getState().select([id]);
      const n = flow.getInternalNode(id);
      if (n) {
        const p = n.internals.positionAbsolute;
        flow.setCenter(p.x + (n.measured.width ?? 0) / 2, p.y + (n.measured.height ?? 0) / 2, {
          zoom: Math.max(flow.getZoom(), 1),
          duration: 300,
        });
      }
    } else {
      useRun.getState().selectEdge(s.id);
      const e = useEditor.getState().edges.find((x) => x.id === s.id);
      const a = e && flow.getInternalNode(e.source);
      const b = e && flow.getInternalNode(e.target);
      if (a && b) {
        const pa = a.internals.positionAbsolute;
        const pb = b.internals.positionAbsolute;
        flow.setCenter((pa.x + pb.x + (a.measured.width ?? 0)) / 2, (pa.y + pb.y + (b.measured.height ?? 0)) / 2, {
          zoom: Math.max(flow.getZoom(), 1),
          duration: 300,
        });
      }
    }
  };

  return (
    <section className="overlay-panel nodrag" aria-label="overlay" data-covers="left" ref={panel}>
      <header>
        <label>
          Colour by{" "}
          <select
            aria-label="overlay statistic"
            value={stat}
            onChange={(e) => useOverlay.getState().setStat(e.target.value as OverlayStat)}
          >
            {OVERLAY_STATS.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" aria-label="close the overlay" title="the usual colours" onClick={() => useOverlay.getState().setStat(null)}>
          ×
        </button>
      </header>
      <div className="overlay-legend" aria-label="overlay legend">
        <div className="overlay-what">{about?.what}</div>
        {finite && (
          <div className="overlay-ramp-row">
            <span className="overlay-end">{fmtEnd(result.min, stat)}</span>
            <span className="overlay-ramp" style={{ background: `linear-gradient(to right, ${RAMP.join(", ")})` }} />
            <span className="overlay-end">{fmtEnd(result.max, stat)}</span>
            <span className="overlay-scale">{result.scale === "log" ? "log scale" : ""}</span>
          </div>
        )}
        {bad && (
          <div className="overlay-ramp-row">
            <span className="overlay-swatch" style={{ background: BAD_COLOUR }} /> holds NaN or Inf
          </div>
        )}
        {result.note && <div className="overlay-note">{result.note}</div>}
      </div>
      {worst.length ? (
        <>
          <h3>Worst {worst.length}</h3>
          <ol className="overlay-worst" aria-label="worst 10">
            {worst.map((s) => (
              <li key={`${s.kind}:${s.id}`}>
                <button type="button" onClick={() => show(s)} data-overlay-value={s.bad ? "bad" : s.value}>
                  <span className="overlay-swatch" style={{ background: colourOf(result, s) }} />
                  <span className="overlay-name">{s.kind === "node" ? nameOf(s.id) : edgeName(s.id)}</span>
                  <span className="overlay-stat">{s.text}</span>
                </button>
              </li>
            ))}
          </ol>
        </>
      ) : (
        <div className="overlay-note">
          {stat === "grad" ? "Run Backward to see gradients." : stat === "update" ? "" : "Run the graph to see its values."}
        </div>
      )}
    </section>
  );
}

function fmtEnd(v: number, stat: OverlayStat): string {
  if (stat === "dead") return `${Math.round(v * 100)}%`;
  return v === 0 ? "0" : Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3 ? v.toExponential(1) : String(Number(v.toPrecision(3)));
}
