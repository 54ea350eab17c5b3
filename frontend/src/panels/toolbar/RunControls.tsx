// Forward and Backward. One click on Backward runs from the document's target (else the last
// scalar node); its ▾ opens the target list and the teaching options, named by the labels
// people gave the nodes. A run in progress can be cancelled. The no_grad toggle applies to both
// (the forward pass records no graph), so it sits here, in view, not in Backward's options.
import { hostChannel } from "../../api/host";
import { type RefObject, useCallback, useRef, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { RunFinished } from "../../api/types";
import { graphLevel } from "../../doc/modules";
import { defaultTarget, targetChoices } from "../../doc/target";
import { readableName } from "../../canvas/faces";
import { useEditor } from "../../store/editor";
import { type RunRefusal, useRun } from "../../store/run";
import { nameOf } from "../../store/names";
import TeachingOptions from "./TeachingOptions";
import { usePopover } from "./usePopover";

/** Where one click on Backward starts: the document's target, else the default guess. */
export function backwardTarget(): string | null {
  const { nodes, edges } = graphLevel(useEditor.getState()); // a module may be open
  return defaultTarget(nodes, edges, useRun.getState().annotations.values, useEditor.getState().meta.target);
}

/** Backward from the default target, as the button and Ctrl+Shift+Enter do it. */
export function runBackward() {
  return useRun.getState().start("backward", backwardTarget());
}

export default function RunControls() {
  const running = useRun((s) => s.running);
  const connected = useRun((s) => s.connected);
  const hasRecords = useRun((s) => s.records.length > 0);
  const stepping = useRun((s) => s.step !== null);
  const runId = useRun((s) => s.runId);
  const finished = useRun((s) => s.finished);
  const refused = useRun((s) => s.refused);
  const noGrad = useRun((s) => Boolean(s.options.no_grad));
  const [asking, setAsking] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const close = useCallback(() => setAsking(false), []);
  const run = useRun.getState();
  // a student in a room watches the owner's runs: no run buttons of its own (Fork for that)
  const following = useRun((s) => s.following);
  return (
    <div className="run-controls" role="group" aria-label="run">
      {following && (
        <span className="following-note" aria-label="runs are the teacher's">
          {hostChannel()?.readOnly ? "a saved view: open it in Wiregrad to run it" : "your teacher runs the graph"}
        </span>
      )}
      {!following && (
        <>
          <button type="button" className="primary" aria-label="Forward" disabled={!connected} onClick={() => run.start("forward")} title="Ctrl+Enter">
            ▶ Forward
          </button>
          <button
            type="button"
            className="primary grad"
            aria-label="Backward"
            disabled={!connected}
            onClick={() => runBackward()}
            title="backward from the target (Ctrl+Shift+Enter)"
          >
            ◀ Backward
          </button>
          <button
            ref={opener}
            type="button"
            className="primary grad more"
            aria-label="Backward options"
            aria-haspopup="dialog"
            aria-expanded={asking}
            disabled={!connected}
            onClick={() => setAsking(!asking)}
            title="choose where backward starts, and the teaching options"
          >
            ▾
          </button>
          <button
            type="button"
            className="no-grad"
            aria-pressed={noGrad}
            onClick={() => run.setOption("no_grad", !noGrad)}
            title="run the forward pass under torch.no_grad(): the same values, no graph recorded"
          >
            no_grad
          </button>
        </>
      )}
      {asking && !following && <TargetPicker onDone={close} opener={opener} />}
      <span
        className="run-status"
        role="status"
        aria-label="run status"
        data-run={runId ?? ""}
        data-status={running ? "running" : refused ? "refused" : (finished?.status ?? "")}
        title={!running && refused ? refused.message : undefined}
      >
        {running ? "running…" : refused ? refusalSummary(refused) : finished ? runSummary(finished) : ""}
      </span>
      {running && (
        <button type="button" onClick={() => run.cancel()}>
          cancel run
        </button>
      )}
      <button
        type="button"
        aria-pressed={stepping}
        disabled={!hasRecords || running}
        onClick={() => (stepping ? run.exitStep() : run.enterStep())}
        title="replay the last run record by record"
      >
        step mode
      </button>
    </div>
  );
}

/** A refused run in the toolbar's few characters: where (the node, by its name); the whole
 * reason is the status's title, the notice and the node's own problem line. */
export function refusalSummary(r: RunRefusal): string {
  return r.node ? `refused at ${nameOf(r.node)}` : "refused";
}

function runSummary(f: RunFinished) {
  if (f.status === "ok") return `ok · ${Math.round(f.timings.total_ms ?? 0)} ms`;
  return f.status;
}

function TargetPicker({ onDone, opener }: { onDone: () => void; opener: RefObject<HTMLButtonElement | null> }) {
  // the graph's nodes, also while a module is open on the canvas
  const nodes = useEditor(useShallow((s) => graphLevel(s).nodes.map((n) => n.id)));
  // a label as written ("y = y * 2  (pass 3)"): several nodes may share one name
  const names = useEditor(
    useShallow((s) => graphLevel(s).nodes.map((n) => n.data.label || readableName({ id: n.id, ...n.data }))),
  );
  const ref = useRef<HTMLDivElement>(null);
  usePopover(ref, onDone, opener);
  const edges = useEditor((s) => graphLevel(s).edges);
  const docTarget = useEditor((s) => s.meta.target);
  const values = useRun((s) => s.annotations.values);
  const ids = nodes.map((id) => ({ id }));
  const [target, setTarget] = useState(defaultTarget(ids, edges, values, docTarget) ?? "");
  const go = () => {
    onDone();
    useRun.getState().start("backward", target || null);
  };
  return (
    <div className="popover" role="dialog" aria-label="backward target" ref={ref}>
      <label htmlFor="target-select">backward from</label>
      <select id="target-select" value={target} onChange={(e) => setTarget(e.target.value)} autoFocus>
        {targetChoices(ids, edges, values).map((id) => (
          <option key={id} value={id}>
            {names[nodes.indexOf(id)] ?? id}
            {values[id] ? (values[id].numel === 1 ? " (scalar)" : ` (${values[id].shape.join("×")})`) : ""}
          </option>
        ))}
      </select>
      <button type="button" className="primary grad" onClick={go}>
        run backward
      </button>
      <TeachingOptions />
    </div>
  );
}
