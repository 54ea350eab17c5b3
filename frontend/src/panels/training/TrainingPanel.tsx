// Training: the settings (kept in the document), Train / Pause / Resume / Stop, a live loss
// chart, a classifier's training accuracy and, for 2-D data, the decision boundary with the
// data points.
import { useEffect, useId, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { TrainingSettings } from "../../api/types";
import { graphLevel } from "../../doc/modules";
import { defaultTarget } from "../../doc/target";
import { useEditor } from "../../store/editor";
import { useRun } from "../../store/run";
import { formatAccuracy, type QueuePlace, type TrainStatus, useTraining } from "../../store/training";
import BoundaryView from "./BoundaryView";
import LossChart from "./LossChart";
import SpeedControl from "./SpeedControl";

export function trainingSettings(): TrainingSettings {
  const ed = useEditor.getState();
  const saved = ed.meta.training;
  const top = graphLevel(ed); // the graph's nodes, also while a module is open on the canvas
  const loss = saved?.loss ?? defaultTarget(top.nodes, top.edges, useRun.getState().annotations.values, ed.meta.target);
  return {
    loss,
    output: saved?.output ?? null,
    optimizer: saved?.optimizer ?? "adam",
    lr: saved?.lr ?? 0.05,
    momentum: saved?.momentum ?? 0.9,
    steps: saved?.steps ?? 300,
    batch_size: saved?.batch_size ?? 0,
    seed: saved?.seed ?? 0,
  };
}

type NumberKey = "lr" | "momentum" | "steps" | "batch_size" | "seed";

// The bounds of backend/graph/document.py TrainingSettings: a value outside them is refused at
// its field, with the reason, before it reaches the document.
const RULES: Record<NumberKey, { int: boolean; min: number; max: number; minOpen?: boolean; maxOpen?: boolean }> = {
  lr: { int: false, min: 0, max: 10, minOpen: true },
  momentum: { int: false, min: 0, max: 1, maxOpen: true },
  steps: { int: true, min: 1, max: 100_000 },
  batch_size: { int: true, min: 0, max: 100_000 },
  seed: { int: true, min: 0, max: 2 ** 31 - 1 },
};

const LABELS: Record<NumberKey, string> = {
  lr: "the learning rate",
  momentum: "momentum",
  steps: "steps",
  batch_size: "the batch size",
  seed: "the seed",
};

/** A training setting's text as its value, or the reason it is refused. */
export function parseTrainingValue(
  key: NumberKey,
  raw: string,
): { ok: true; value: number } | { ok: false; error: string } {
  const r = RULES[key];
  const name = LABELS[key];
  const text = raw.trim();
  const v = Number(text);
  if (text === "" || !Number.isFinite(v)) return { ok: false, error: `${name} must be a number` };
  if (r.int && !Number.isInteger(v)) return { ok: false, error: `${name} must be a whole number` };
  const fmt = (n: number) => n.toLocaleString("en");
  if (r.minOpen ? v <= r.min : v < r.min)
    return { ok: false, error: `${name} must be ${r.minOpen ? "greater than" : "at least"} ${fmt(r.min)}` };
  if (r.maxOpen ? v >= r.max : v > r.max)
    return { ok: false, error: `${name} must be ${r.maxOpen ? "less than" : "at most"} ${fmt(r.max)}` };
  return { ok: true, value: v };
}

/** One number of the settings: committed on Enter or blur; a refused value stays in the field
 * with the reason beside it (Escape puts the saved value back). */
function SettingField(props: {
  name: NumberKey;
  label: string;
  value: number;
  disabled: boolean;
  onChange: (v: number) => void;
  onRefused: (refused: boolean) => void;
}) {
  const { name, label, value, disabled, onChange, onRefused } = props;
  const id = useId();
  const [text, setText] = useState(String(value));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setText(String(value));
    setError(null);
  }, [value]);
  useEffect(() => onRefused(error !== null), [error, onRefused]);
  useEffect(() => () => onRefused(false), [onRefused]); // momentum's field goes with adam
  const commit = (raw: string) => {
    const r = parseTrainingValue(name, raw);
    if (!r.ok) {
      setError(r.error);
      return;
    }
    setError(null);
    if (r.value !== value) onChange(r.value);
  };
  return (
    <label className={`train-field ${error ? "invalid" : ""}`}>
      {label}
      <input
        type="text"
        inputMode="decimal"
        aria-label={label}
        value={text}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-err` : undefined}
        onChange={(e) => setText(e.target.value)}
        onBlur={(e) => commit(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") commit((e.target as HTMLInputElement).value);
          if (e.key === "Escape") {
            setText(String(value));
            setError(null);
          }
        }}
      />
      {error && (
        <span id={`${id}-err`} className="field-error" role="alert">
          {error}
        </span>
      )}
    </label>
  );
}

/** The server runs a few trainings at once; the others wait in line (training_queue.py). */
export function queuedText(q: QueuePlace): string {
  const busy = q.running ? ` (${q.running} running)` : "";
  return q.position === 1
    ? `waiting: next in line for a free slot${busy}`
    : `waiting: ${q.position - 1} ahead in line for a free slot${busy}`;
}

/** The training's progress in words: its status, the step reached of how many, the loss (or
 * its place in line while it waits for a slot). */
export function progressText(
  status: TrainStatus,
  queued: QueuePlace | null,
  step: number,
  total: number,
  loss: number | null,
): string {
  const where =
    status === "idle"
      ? ""
      : status === "queued" && queued
        ? queuedText(queued)
        : `${status} · step ${step}${total ? ` / ${total}` : ""}`;
  return where + (loss !== null ? ` · loss ${loss.toPrecision(4)}` : "");
}

/** Whether Train (and a lesson's "train again") starts from the seeded weights or goes on from
 * the trained ones (store/training.ts). */
export function ContinueChoice({ disabled }: { disabled: boolean }) {
  const on = useTraining((s) => s.continueTrained);
  return (
    <label className="train-continue" title="unticked: each training starts from the weights the graph had before its first training">
      <input
        type="checkbox"
        checked={on}
        disabled={disabled}
        onChange={(e) => useTraining.getState().setContinueTrained(e.target.checked)}
      />
      continue from trained weights
    </label>
  );
}

export default function TrainingPanel() {
  useEditor((s) => s.meta.training); // re-render when the settings change
  const nodeIds = useEditor(useShallow((s) => graphLevel(s).nodes.map((n) => n.id)));
  const following = useRun((s) => s.following);
  const { status, step, total, loss, accuracy, error, queued } = useTraining(
    useShallow((s) => ({
      queued: s.queued,
      accuracy: s.snapshot?.accuracy ?? null, // a classifier's, from the last snapshot
      status: s.status,
      step: s.steps.length ? s.steps[s.steps.length - 1] : 0,
      total: s.totalSteps,
      loss: s.losses.length ? s.losses[s.losses.length - 1] : null,
      error: s.error,
    })),
  );
  const settings = trainingSettings();
  const set = (patch: Partial<TrainingSettings>) =>
    useEditor.getState().setMeta({ training: { ...settings, ...patch } });
  const active = status === "running" || status === "paused" || status === "starting" || status === "queued";
  const tr = useTraining.getState();
  // fields whose text is refused: Train waits until they are fixed (or Escape puts them back)
  const [refused, setRefused] = useState<ReadonlySet<NumberKey>>(new Set());
  const [refusedSetters] = useState(() => {
    const make = (key: NumberKey) => (bad: boolean) =>
      setRefused((s) => {
        if (s.has(key) === bad) return s;
        const next = new Set(s);
        if (bad) next.add(key);
        else next.delete(key);
        return next;
      });
    return { lr: make("lr"), momentum: make("momentum"), steps: make("steps"), batch_size: make("batch_size"), seed: make("seed") };
  });

  const number = (key: NumberKey, label: string) => (
    <SettingField
      name={key}
      label={label}
      value={settings[key]}
      disabled={active || following}
      onChange={(v) => set({ [key]: v })}
      onRefused={refusedSetters[key]}
    />
  );

  return (
    <section className="training" role="region" aria-label="training">
      <div className="train-settings">
        <label className="train-field">
          loss
          <select
            aria-label="loss node"
            value={settings.loss ?? ""}
            disabled={active || following}
            onChange={(e) => set({ loss: e.target.value })}
          >
            {nodeIds.map((id) => (
              <option key={id}>{id}</option>
            ))}
          </select>
        </label>
        <label className="train-field">
          optimizer
          <select
            aria-label="optimizer"
            value={settings.optimizer}
            disabled={active || following}
            onChange={(e) => set({ optimizer: e.target.value as "sgd" | "adam" })}
          >
            <option value="adam">Adam</option>
            <option value="sgd">SGD</option>
          </select>
        </label>
        {number("lr", "learning rate")}
        {settings.optimizer === "sgd" && number("momentum", "momentum")}
        {number("steps", "steps")}
        {number("batch_size", "batch size (0: all)")}
        <SpeedControl disabled={following} />
      </div>
      <div className="train-buttons">
        {!active ? (
          <button
            type="button"
            className="primary"
            disabled={following || refused.size > 0}
            title={refused.size ? "fix the refused settings first" : undefined}
            onClick={() => tr.start(trainingSettings())}
          >
            Train
          </button>
        ) : status === "paused" ? (
          <button type="button" onClick={() => tr.control("resume")} disabled={following}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={() => tr.control("pause")} disabled={following || status === "starting" || status === "queued"}>
            Pause
          </button>
        )}
        <button type="button" onClick={() => tr.control("stop")} disabled={!active || following}>
          Stop
        </button>
        {!following && <ContinueChoice disabled={active} />}
        <span className="train-status" role="status" aria-label="training status" data-status={status}>
          {progressText(status, queued, step, total, loss)}
        </span>
        {accuracy !== null && (
          <span
            className="train-accuracy"
            role="status"
            aria-label="training accuracy"
            title="the share of the whole dataset whose highest class score is its label (in eval mode), at the last snapshot"
          >
            {formatAccuracy(accuracy)}
          </span>
        )}
      </div>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <div className="train-views">
        <LossChart />
        <BoundaryView />
      </div>
    </section>
  );
}
