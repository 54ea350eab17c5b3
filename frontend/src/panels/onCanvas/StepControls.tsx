// Step mode: replay the last run's records one at a time — step, play, pause, speed, and a
// scrubber to jump anywhere — with the node or edge each record is about highlighted on the
// canvas. It opens paused at the start. With a module instance open, the records of its inner
// nodes and edges show on them, named by their inner ids; at a level where an instance is
// closed, a record from inside it lights the instance up as a whole (canvas/runSlice.ts).
import { useEffect } from "react";
import { readableName } from "../../canvas/faces";
import { depthShowing, scopeOf, shownAt, underOf } from "../../doc/modules";
import { describeRecord, recordFocus } from "../../store/annotations";
import { useEditor } from "../../store/editor";
import { useScope } from "../../store/modules";
import { nameOf } from "../../store/names";
import { Icon } from "./icons";
import { useRun } from "../../store/run";

/** Where the run's node or edge `key` is, said after the caption, when it is not simply on
 * the level opened at `scope`: inside an instance closed there, or outside the module open. */
export function placeNote(scope: string, key: string | undefined): string {
  if (!key) return "";
  const place = shownAt(scope, key);
  if (!place) return ` (outside ${scope}, the module open)`;
  return place.inside ? ` (inside ${place.id})` : "";
}

/** The run's node `key` by name: inside the opened instance (at `scope`) as its canvas names
 * it; outside it, as the level above that holds it does (its readable name there), else by path. */
export function nameAt(scope: string) {
  const open = useEditor.getState().meta.open ?? [];
  return (key: string) => {
    const inner = underOf(scope, key);
    if (inner !== null) return nameOf(inner);
    const depth = depthShowing(open, key); // a level above the one shown
    const local = underOf(scopeOf({ open: open.slice(0, depth) }), key);
    const n = open[depth]?.nodes.find((x) => x.id === local);
    return n ? readableName({ id: n.id, ...n.data }) : key;
  };
}

export default function StepControls() {
  const step = useRun((s) => s.step);
  const total = useRun((s) => s.records.length);
  const current = useRun((s) => (s.step && s.step.index > 0 ? s.records[s.step.index - 1] : null));
  const run = useRun.getState();
  const scope = useScope();
  const focus = current ? recordFocus(current) : {};

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
        {current
          ? describeRecord(current, nameAt(scope)) + placeNote(scope, focus.node ?? focus.edge)
          : "press play or step forward"}
      </span>
      <button type="button" onClick={() => run.exitStep()}>
        exit step mode
      </button>
    </div>
  );
}
