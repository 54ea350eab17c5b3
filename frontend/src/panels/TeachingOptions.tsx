// Toggles for showing the classic mistakes: gradients that accumulate without zero_grad, and
// backward run twice without retain_graph (docs/training.md "Run options for teaching").
import { useRun } from "../store/run";

const TOGGLES = [
  ["accumulate_grad", "keep .grad across runs (no zero_grad)"],
  ["backward_twice", "call backward twice"],
  ["retain_graph", "retain_graph=True"],
] as const;

export default function TeachingOptions() {
  const options = useRun((s) => s.options);
  return (
    <fieldset className="teaching-options">
      <legend>teaching</legend>
      {TOGGLES.map(([key, label]) => (
        <label key={key}>
          <input
            type="checkbox"
            checked={Boolean(options[key])}
            onChange={(e) => useRun.getState().setOption(key, e.target.checked)}
          />{" "}
          {label}
        </label>
      ))}
    </fieldset>
  );
}
