// Step mode: replay the last run's records one at a time — step, play, pause, speed, and a
// scrubber to jump anywhere — with the node or edge each record is about highlighted on the
// canvas. It opens paused at the start.
import { useEffect } from "react";
import { describeRecord } from "../store/annotations";
import { nameOf } from "../store/names";
import { Icon } from "./icons";
import { useRun } from "../store/run";

export default function StepControls() {
  const step = useRun((s) => s.step);
  const total = useRun((s) => s.records.length);
  const current = useRun((s) => (s.step && s.step.index > 0 ? s.records[s.step.index - 1] : null));
  const run = useRun.getState();

  useEffect(() => {
    if (!step?.playing) return;
    const timer = setTimeout(() => run.stepTo(step.index + 1), 1000 / step.speed);
    return () => clearTimeout(timer);
  }, [step, run]);

  if (!step) return null;
  return (
    <div className="step-controls" role="group" aria-label="step mode">
      <button type="button" aria-label="step back" onClick={() => run.stepTo(step.index - 1)} disabled={step.index === 0}>
        <Icon name="back" />
      </button>
      {step.playing ? (
        <button type="button" aria-label="pause" onClick={() => run.setPlaying(false)}>
          <Icon name="pause" />
        </button>
      ) : (
        <button type="button" aria-label="play" onClick={() => run.setPlaying(true)} disabled={step.index >= total}>
          <Icon name="play" />
        </button>
      )}
      <button type="button" aria-label="step forward" onClick={() => run.stepTo(step.index + 1)} disabled={step.index >= total}>
        <Icon name="forward" />
      </button>
      <input
        type="range"
        className="step-scrubber"
        aria-label="replay position"
        min={0}
        max={total}
        value={step.index}
        onChange={(e) => {
          run.setPlaying(false);
          run.stepTo(Number(e.target.value));
        }}
      />
      <label>
        speed
        <input
          type="range"
          aria-label="speed"
          min={1}
          max={30}
          value={step.speed}
          onChange={(e) => run.setSpeed(Number(e.target.value))}
        />
      </label>
      <span className="step-count" aria-label="step position">
        {step.index} / {total}
      </span>
      <span className="step-caption" role="status">
        {current ? describeRecord(current, nameOf) : "press play or step forward"}
      </span>
      <button type="button" onClick={() => run.exitStep()}>
        exit step mode
      </button>
    </div>
  );
}
