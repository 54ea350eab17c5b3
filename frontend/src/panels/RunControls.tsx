// Forward and Backward. Backward asks for its scalar target (defaulting to the document's, or
// the last scalar node); a run in progress can be cancelled. The no_grad toggle applies to both
// (the forward pass records no graph), so it sits here, in view, not in Backward's options.
import { useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { RunFinished } from "../api/types";
import { defaultTarget, targetChoices } from "../doc/target";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import TeachingOptions from "./TeachingOptions";

export default function RunControls() {
  const running = useRun((s) => s.running);
  const connected = useRun((s) => s.connected);
  const hasRecords = useRun((s) => s.records.length > 0);
  const stepping = useRun((s) => s.step !== null);
  const runId = useRun((s) => s.runId);
  const finished = useRun((s) => s.finished);
  const noGrad = useRun((s) => Boolean(s.options.no_grad));
  const [asking, setAsking] = useState(false);
  const run = useRun.getState();
  return (
    <div className="run-controls" role="group" aria-label="run">
      <button type="button" className="primary" aria-label="Forward" disabled={!connected} onClick={() => run.start("forward")} title="Ctrl+Enter">
        ▶ Forward
      </button>
      <button
        type="button"
        className="primary grad"
        aria-label="Backward"
        disabled={!connected}
        aria-expanded={asking}
        onClick={() => setAsking(!asking)}
        title="Ctrl+Shift+Enter"
      >
        ◀ Backward
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
      {asking && <TargetPicker onDone={() => setAsking(false)} />}
      <span
        className="run-status"
        role="status"
        aria-label="run status"
        data-run={runId ?? ""}
        data-status={running ? "running" : (finished?.status ?? "")}
      >
        {running ? "running…" : finished ? runSummary(finished) : ""}
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

function runSummary(f: RunFinished) {
  if (f.status === "ok") return `ok · ${Math.round(f.timings.total_ms ?? 0)} ms`;
  return f.status;
}

function TargetPicker({ onDone }: { onDone: () => void }) {
  const nodes = useEditor(useShallow((s) => s.nodes.map((n) => n.id)));
  const edges = useEditor((s) => s.edges);
  const docTarget = useEditor((s) => s.meta.target);
  const values = useRun((s) => s.annotations.values);
  const ids = nodes.map((id) => ({ id }));
  const [target, setTarget] = useState(defaultTarget(ids, edges, values, docTarget) ?? "");
  const go = () => {
    onDone();
    useRun.getState().start("backward", target || null);
  };
  return (
    <div className="popover" role="dialog" aria-label="backward target">
      <label htmlFor="target-select">backward from</label>
      <select id="target-select" value={target} onChange={(e) => setTarget(e.target.value)} autoFocus>
        {targetChoices(ids, edges, values).map((id) => (
          <option key={id} value={id}>
            {id}
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
