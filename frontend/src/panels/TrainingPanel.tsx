// Training: the settings (kept in the document), Train / Pause / Resume / Stop, a live loss
// chart and, for 2-D data, the decision boundary with the data points.
import { useShallow } from "zustand/react/shallow";
import type { TrainingSettings } from "../api/types";
import { defaultTarget } from "../doc/target";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import { useTraining } from "../store/training";
import BoundaryView from "./BoundaryView";
import LossChart from "./LossChart";

export function trainingSettings(): TrainingSettings {
  const ed = useEditor.getState();
  const saved = ed.meta.training;
  const loss =
    saved?.loss ?? defaultTarget(ed.nodes, ed.edges, useRun.getState().annotations.values, ed.meta.target);
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

export default function TrainingPanel() {
  useEditor((s) => s.meta.training); // re-render when the settings change
  const nodeIds = useEditor(useShallow((s) => s.nodes.map((n) => n.id)));
  const following = useRun((s) => s.following);
  const { status, step, total, loss, error } = useTraining(
    useShallow((s) => ({
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
  const active = status === "running" || status === "paused" || status === "starting";
  const tr = useTraining.getState();

  const number = (key: "lr" | "momentum" | "steps" | "batch_size" | "seed", label: string, min: number, max: number, step = "any") => (
    <label className="train-field">
      {label}
      <input
        type="number"
        aria-label={label}
        min={min}
        max={max}
        step={step}
        defaultValue={settings[key]}
        key={`${key}-${settings[key]}`}
        disabled={active || following}
        onBlur={(e) => {
          const v = Number(e.target.value);
          if (Number.isFinite(v) && v >= min && v <= max && v !== settings[key]) set({ [key]: v });
          else e.target.value = String(settings[key]);
        }}
      />
    </label>
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
        {number("lr", "learning rate", 1e-6, 10)}
        {settings.optimizer === "sgd" && number("momentum", "momentum", 0, 0.999)}
        {number("steps", "steps", 1, 100000, "1")}
        {number("batch_size", "batch size (0: all)", 0, 100000, "1")}
      </div>
      <div className="train-buttons">
        {!active ? (
          <button type="button" className="primary" disabled={following} onClick={() => tr.start(trainingSettings())}>
            Train
          </button>
        ) : status === "paused" ? (
          <button type="button" onClick={() => tr.control("resume")} disabled={following}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={() => tr.control("pause")} disabled={following || status === "starting"}>
            Pause
          </button>
        )}
        <button type="button" onClick={() => tr.control("stop")} disabled={!active || following}>
          Stop
        </button>
        <span className="train-status" role="status" aria-label="training status" data-status={status}>
          {status === "idle" ? "" : `${status} · step ${step}${total ? ` / ${total}` : ""}`}
          {loss !== null ? ` · loss ${loss.toPrecision(4)}` : ""}
        </span>
      </div>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <LossChart />
      <BoundaryView />
    </section>
  );
}
