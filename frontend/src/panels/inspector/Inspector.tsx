// The inspector: the selected node's label and params (controls from the registry's param
// specs), its problems, its run results; with nothing selected, the document's own fields.
import { hostChannel } from "../../api/host";
import { useShallow } from "zustand/react/shallow";
import { formatShape, formatSummary } from "../../format/annotate";
import { useEditor } from "../../store/editor";
import { useRun } from "../../store/run";
import { askToMake, useRunKey } from "../../store/modules";
import FdCheck from "./FdCheck";
import ModuleInspector from "./ModuleInspector";
import ParamField from "./ParamField";

/** Following a room as a student: the owner's graph is shown, and edits go nowhere. */
function useFollowing() {
  const readOnly = useEditor((s) => s.readOnly);
  const following = useRun((s) => s.following);
  return readOnly || following;
}

export default function Inspector() {
  const selected = useEditor(useShallow((s) => s.nodes.filter((n) => n.selected).map((n) => n.id)));
  const following = useFollowing();
  return (
    <aside className="inspector" aria-label="inspector">
      {following && (
        <p className="read-only-hint" role="note">
          {hostChannel()?.readOnly
            ? "A saved view of a graph and its last run: these fields are read-only."
            : "You are following a room: these fields are read-only. Fork the room for an editable copy."}
        </p>
      )}
      {selected.length === 1 ? (
        <NodeInspector id={selected[0]} />
      ) : selected.length > 1 ? (
        <SelectionInspector count={selected.length} readOnly={following} />
      ) : (
        <DocumentInspector />
      )}
    </aside>
  );
}

/** Several nodes selected: what can be done with them together. */
function SelectionInspector({ count, readOnly }: { count: number; readOnly: boolean }) {
  return (
    <div className="selection-inspector">
      <h2>{count} nodes selected</h2>
      <div className="inspector-actions">
        <button
          type="button"
          disabled={readOnly}
          onClick={askToMake}
          title="one node for the selection, reusable as an nn.Module (Ctrl+G); trained values stay with this instance"
        >
          Make module…
        </button>
      </div>
    </div>
  );
}

function NodeInspector({ id }: { id: string }) {
  const node = useEditor((s) => s.nodes.find((n) => n.id === id));
  const spec = useEditor((s) => (node ? s.ops[node.data.op] : undefined));
  const problems = useEditor(useShallow((s) => s.problems.filter((p) => p.node === id)));
  const isTarget = useEditor((s) => s.meta.target === id);
  const key = useRunKey(id); // inside an opened module: the opened instance's records
  const value = useRun((s) => s.annotations.values[key]);
  const grad = useRun((s) => s.annotations.nodeGrads[key]);
  const hasRun = useRun((s) => s.runId !== null);
  const leafGrad = useRun((s) => Boolean(s.annotations.leafGrads[key]));
  // a layer's own parameters, once a backward has given them a .grad: each opens in the tensor
  // view, value and gradient, as the output does
  const weightGrad = useRun((s) => s.annotations.leafGrads[`${key}.weight`]);
  const biasGrad = useRun((s) => s.annotations.leafGrads[`${key}.bias`]);
  const readOnly = useFollowing();
  if (!node) return null;
  const ed = useEditor.getState();
  const paramProblem = (name: string) => problems.find((p) => p.param === name)?.message;
  const hidden = hiddenParams(node.data.op, node.data.params);

  return (
    <div className="node-inspector">
      <h2>
        {id} <span className="muted">{node.data.op}</span>
      </h2>
      {node.data.op === "module" ? (
        <ModuleInspector id={id} readOnly={readOnly} />
      ) : spec ? (
        <p className="doc">{spec.doc}</p>
      ) : (
        <p className="field-error">unknown op {node.data.op}</p>
      )}
      <div className="param-field">
        <label htmlFor="node-label">label</label>
        <input
          id="node-label"
          defaultValue={node.data.label ?? ""}
          key={`${id}-${node.data.label ?? ""}`}
          placeholder="names the node; its face still shows the op"
          readOnly={readOnly}
          onBlur={(e) => !readOnly && e.target.value !== (node.data.label ?? "") && ed.setLabel(id, e.target.value)}
          onKeyDown={(e) => e.key === "Enter" && (e.target as HTMLInputElement).blur()}
        />
      </div>
      {spec?.params
        .filter((p) => !hidden.has(p.name))
        .map((p) => (
          <ParamField
            key={`${id}:${p.name}`}
            spec={p}
            value={node.data.params[p.name]}
            serverError={paramProblem(p.name)}
            onChange={(v) => ed.setParam(id, p.name, v)}
            readOnly={readOnly}
          />
        ))}
      {problems
        .filter((p) => !p.param)
        .map((p, i) => (
          <p key={i} className="field-error" role="alert">
            {p.port ? `input ${p.port}: ` : ""}
            {p.message}
          </p>
        ))}
      <div className="inspector-actions">
        <button
          type="button"
          aria-pressed={isTarget}
          disabled={readOnly}
          onClick={() => ed.setMeta({ target: isTarget ? null : id })}
          title="backward starts from this scalar node"
        >
          {isTarget ? "backward target ◎" : "use as backward target"}
        </button>
      </div>
      {value && (
        <div className="inspector-result">
          <h3>last run</h3>
          <p>
            value <b className="value">{formatSummary(value)}</b>{" "}
            <span className="muted">
              {formatShape(value.shape)} {value.dtype} {value.grad_fn ?? ""}
            </span>
          </p>
          {grad && (
            <p>
              gradient <b className="grad">{formatSummary(grad)}</b>
            </p>
          )}
          {hasRun && (
            <div className="inspector-actions">
              <button type="button" onClick={() => useRun.getState().view({ node: key, kind: "value" })}>
                view value
              </button>
              {grad && (
                <button type="button" onClick={() => useRun.getState().view({ node: key, kind: "grad" })}>
                  view gradient
                </button>
              )}
              {(["weight", "bias"] as const)
                .filter((param) => (param === "weight" ? weightGrad : biasGrad))
                .map((param) => (
                  <span key={param} className="inspector-param">
                    <button type="button" onClick={() => useRun.getState().view({ node: key, kind: "value", param })}>
                      view {param}
                    </button>
                    <button type="button" onClick={() => useRun.getState().view({ node: key, kind: "grad", param })}>
                      view {param}.grad
                    </button>
                  </span>
                ))}
            </div>
          )}
        </div>
      )}
      {leafGrad && spec?.source && <FdCheck id={key} />}
    </div>
  );
}

/** Params that do nothing in the node's current state: a tensor with a literal value ignores
 * shape, init and seed, so they are hidden until the value is cleared; so does a digits
 * dataset its noise, labels and CSV fields. */
function hiddenParams(op: string, params: Record<string, unknown>): Set<string> {
  if ((op === "tensor" || op === "parameter") && params.value != null)
    return new Set(["shape", "init", "seed"]);
  // scikit-learn's digits: images and their classes, no noise, no CSV (datasets.py)
  if (op === "dataset" && params.kind === "digits") return new Set(["noise", "labels", "csv", "features", "target"]);
  return new Set();
}

function DocumentInspector() {
  const meta = useEditor((s) => s.meta);
  const count = useEditor((s) => s.nodes.length);
  const readOnly = useFollowing();
  const ed = useEditor.getState();
  return (
    <div className="doc-inspector">
      <h2>graph</h2>
      <div className="param-field">
        <label htmlFor="doc-name">name</label>
        <input
          id="doc-name"
          key={`name-${meta.name}`}
          defaultValue={meta.name}
          readOnly={readOnly}
          onBlur={(e) => !readOnly && e.target.value !== meta.name && ed.setMeta({ name: e.target.value || "untitled" })}
          onKeyDown={(e) => e.key === "Enter" && (e.target as HTMLInputElement).blur()}
        />
      </div>
      <div className="param-field">
        <label htmlFor="doc-description">description</label>
        <textarea
          id="doc-description"
          key={`desc-${meta.description}`}
          defaultValue={meta.description}
          rows={6}
          readOnly={readOnly}
          onBlur={(e) => !readOnly && e.target.value !== meta.description && ed.setMeta({ description: e.target.value })}
        />
      </div>
      <p className="muted">
        {count} nodes · backward target: {meta.target ?? "the last scalar node"}
      </p>
      <p className="muted">Drag ops from the palette, or double-click the canvas to add one.</p>
    </div>
  );
}
