// Training on the projector (issue 35): presenter mode hides the side panels, so a training
// shows here instead, beside the graph and large enough to read from the back of a room: the
// progress, the pace, the loss chart, a classifier's accuracy and the decision boundary for
// 2-D data (the training tab's LossChart, BoundaryView and SpeedControl, laid out for a
// projector). It stays until the teacher closes it or opens another graph (App.tsx).
import { useShallow } from "zustand/react/shallow";
import { useRun } from "../../store/run";
import { formatAccuracy, useTraining } from "../../store/training";
import BoundaryView from "./BoundaryView";
import LossChart from "./LossChart";
import SpeedControl from "./SpeedControl";
import { ContinueChoice, progressText } from "./TrainingPanel";

export default function ProjectorTraining({ onClose }: { onClose: () => void }) {
  const following = useRun((s) => s.following);
  const { status, step, total, loss, accuracy, queued } = useTraining(
    useShallow((s) => ({
      status: s.status,
      queued: s.queued,
      step: s.steps.length ? s.steps[s.steps.length - 1] : 0,
      total: s.totalSteps,
      loss: s.losses.length ? s.losses[s.losses.length - 1] : null,
      accuracy: s.snapshot?.accuracy ?? null,
    })),
  );
  const tr = useTraining.getState();
  const active = status === "running" || status === "paused" || status === "starting" || status === "queued";
  return (
    <aside className="projector-training" role="region" aria-label="training on the projector">
      <header>
        <b>Training</b>
        <button type="button" className="small" aria-label="close training chart" onClick={onClose}>
          ×
        </button>
      </header>
      <p className="projector-progress" role="status" aria-label="training progress" data-status={status}>
        {progressText(status, queued, step, total, loss)}
      </p>
      <progress max={total || 1} value={step} aria-label="steps done" />
      {accuracy !== null && (
        <p className="projector-accuracy" aria-label="training accuracy on the projector">
          {formatAccuracy(accuracy)}
        </p>
      )}
      <div className="projector-controls">
        {!following && active && (
          <>
            {status === "paused" ? (
              <button type="button" onClick={() => tr.control("resume")}>
                Resume
              </button>
            ) : (
              <button type="button" onClick={() => tr.control("pause")} disabled={status === "starting" || status === "queued"}>
                Pause
              </button>
            )}
            <button type="button" onClick={() => tr.control("stop")}>
              Stop
            </button>
          </>
        )}
        <SpeedControl disabled={following} />
        {!following && !active && <ContinueChoice disabled={false} />}
      </div>
      <LossChart height={210} />
      <BoundaryView />
    </aside>
  );
}
