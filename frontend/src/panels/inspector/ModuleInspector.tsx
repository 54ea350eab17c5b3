// The inspector's part for a module instance: what it is, its ports, its seed (each instance
// has its own parameters: the seed is added to its random sources'), open and unpack; rename
// or delete its module (panels/dialogs/ModuleDefDialog.tsx).
import { useEditor } from "../../store/editor";
import { openInstance, unpack, useModuleUi } from "../../store/modules";

export default function ModuleInspector({ id, readOnly }: { id: string; readOnly: boolean }) {
  const params = useEditor((s) => s.nodes.find((n) => n.id === id)?.data.params);
  const name = String(params?.module ?? "");
  const def = useEditor((s) => s.meta.modules?.find((m) => m.name === name));
  if (!def) return <p className="field-error">no module named {name} in this graph</p>;
  const seed = Number(params?.seed ?? 0);
  const trained = Object.keys((params?.state as object) ?? {}).length;
  return (
    <div className="module-inspector">
      <p className="doc">
        an instance of the module <b>{name}</b>
        {def.doc ? `: ${def.doc}` : ""} — inputs {def.inputs.join(", ") || "none"}; outputs{" "}
        {def.outputs.join(", ") || "none"}. Edits inside it change every instance.
      </p>
      <div className="param-field">
        <label htmlFor="module-seed">seed</label>
        <input
          id="module-seed"
          type="number"
          min={0}
          step={1}
          key={`${id}-${seed}`}
          defaultValue={seed}
          readOnly={readOnly}
          title="added to the seed of every random source inside: instances with different seeds start apart"
          onBlur={(e) => {
            const v = Math.max(0, Math.floor(Number(e.target.value) || 0));
            if (!readOnly && v !== seed) useEditor.getState().setParam(id, "seed", v || undefined);
          }}
          onKeyDown={(e) => e.key === "Enter" && (e.target as HTMLInputElement).blur()}
        />
      </div>
      {trained > 0 && <p className="muted">trained values of {trained} inner node{trained > 1 ? "s" : ""} (its own)</p>}
      <div className="inspector-actions">
        <button type="button" onClick={() => openInstance(id)}>
          Open module
        </button>
        <button type="button" disabled={readOnly} onClick={() => unpack(id)}>
          Unpack
        </button>
        <button type="button" disabled={readOnly} onClick={() => useModuleUi.getState().setDefEdit({ name, action: "rename" })}>
          Rename module…
        </button>
        <button type="button" disabled={readOnly} onClick={() => useModuleUi.getState().setDefEdit({ name, action: "delete" })}>
          Delete module…
        </button>
      </div>
    </div>
  );
}
