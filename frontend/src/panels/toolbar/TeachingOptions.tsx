// Toggles for showing the classic mistakes: gradients that accumulate without zero_grad,
// backward run twice without retain_graph, and backward from a target that is not one number,
// which needs a gradient to start from (docs/training.md "Run options for teaching"). The
// no_grad toggle, which forward runs follow too, sits beside the run buttons (RunControls).
import { useRun } from "../../store/run";

const TOGGLES = [
  ["accumulate_grad", "keep .grad across runs (no zero_grad)"],
  ["backward_twice", "call backward twice"],
  ["retain_graph", "retain_graph=True"],
  ["gradient_ones", "gradient=ones_like(target)"],
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
