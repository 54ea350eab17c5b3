// What the canvas's colours and marks mean, drawn with the canvas's own classes (a wire here is
// an SVG path of class `wire`, as WireEdgeView draws it; a node an `.op-node`): the legend
// cannot drift from what the canvas shows.
import type { ReactElement } from "react";

interface Entry {
  name: string; // what the row is about, for screen readers and tests
  what: string;
}

/** A short wire in the classes of the canvas's wires (styles.css `.react-flow__edge-path.wire`). */
function Wire({ cls }: { cls: string }) {
  return (
    <svg width="44" height="12" aria-hidden="true" className="legend-wire">
      <path d="M2 6 H42" className={`react-flow__edge-path wire ${cls}`} fill="none" />
    </svg>
  );
}

/** A small node box in a node's classes. */
function Box({ cls }: { cls: string }) {
  return <span className={`op-node legend-node ${cls}`} aria-hidden="true" />;
}

/** A text mark in the colour the canvas writes it in. */
function Mark({ cls, text }: { cls: string; text: string }) {
  return (
    <span className={`legend-mark ${cls}`} aria-hidden="true">
      {text}
    </span>
  );
}

const ROWS: [ReactElement, Entry][] = [
  [<Wire cls="" />, { name: "grey wire", what: "a wire: the value flows forward along it" }],
  [<Wire cls="has-grad" />, { name: "red wire", what: "the gradient backward sent along it (label: ∇ …)" }],
  [<Wire cls="not-taken" />, { name: "faded dashed wire", what: "the branch an if did not take" }],
  [<Wire cls="has-problem" />, { name: "red dashed wire", what: "a wire with a problem (the reason is on it)" }],
  [<Wire cls="focused" />, { name: "yellow wire", what: "where step mode is (also a yellow node)" }],
  [<Box cls="source" />, { name: "purple node", what: "a leaf: a tensor, parameter or dataset the graph starts from" }],
  [<Box cls="has-problem" />, { name: "red node", what: "a problem: its op cannot run on these inputs (the reason is on it)" }],
  [<Box cls="has-warning" />, { name: "amber node", what: "a hint: it runs, but probably not as meant" }],
  [<Box cls="writes" />, { name: "dashed brown node", what: "an in-place op: it writes into its input (badge: in place)" }],
  [<Mark cls="leaf-tag-mark" text="param" />, { name: "param badge", what: "a parameter: a leaf that requires grad and trains" }],
  [<Mark cls="leaf-tag-mark" text="grad" />, { name: "grad badge", what: "a tensor with requires_grad=True" }],
  [<Mark cls="value" text="[1, 2]" />, { name: "blue text", what: "a value (before a run: the value a leaf holds)" }],
  [<Mark cls="value" text="μ 0.12" />, { name: "μ", what: "the mean of a tensor too big to write out (with its shape)" }],
  [<Mark cls="grad" text="∇ 10" />, { name: "∇", what: "the gradient of the loss with respect to this output" }],
  [<Mark cls="leaf-grad" text=".grad 10" />, { name: ".grad", what: "a leaf's .grad, as PyTorch accumulates it (click a weight.grad to open it)" }],
  [<Mark cls="target" text="◎" />, { name: "◎", what: "the target: Backward starts here" }],
  [<Mark cls="lod-mark problem" text="⚠" />, { name: "⚠", what: "zoomed out: a problem (red) or a hint (amber) at this node; hover to read it" }],
  [<Mark cls="port" text="other?" />, { name: "other?", what: "an optional input (…: takes several wires); a hollow dot is optional" }],
  [<Mark cls="port" text="2×3" />, { name: "2×3", what: "the output's shape, known before a run" }],
];

export default function CanvasLegend() {
  return (
    <section className="canvas-legend" aria-label="canvas legend">
      <h3>What the canvas shows</h3>
      <table>
        <tbody>
          {ROWS.map(([sample, e]) => (
            <tr key={e.name} aria-label={e.name}>
              <th>{sample}</th>
              <td>{e.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="legend-note">
        Zoomed far out, a node keeps stripes instead of text: blue, a value arrived; red, a gradient.
      </p>
    </section>
  );
}
