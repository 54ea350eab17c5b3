// The module library in the palette: ready modules (a conv block, a transformer encoder
// block, ...) built from constructor arguments. Choosing one opens a dialog with its
// arguments, in the controls op params have; Add puts the definition into the document's
// modules and one instance on the canvas (store/library.ts).
import { useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { type LibraryEntry, LibraryArgsError } from "../../api/library";
import { addFromLibrary, useLibrary } from "../../store/library";
import Dialog from "../dialogs/Dialog";
import ParamField from "../inspector/ParamField";

type Centre = () => { x: number; y: number };

/** The entries whose name or doc hold every word of `query`. */
function matching(entries: LibraryEntry[], query: string) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return entries.filter((e) => words.every((w) => `${e.name} module library ${e.doc}`.toLowerCase().includes(w)));
}

export default function PaletteLibrary({ query, centre }: { query: string; centre: Centre }) {
  const { entries, loadError, choosing, load, choose } = useLibrary();
  useEffect(() => {
    void load();
  }, [load]);
  const shown = matching(entries ?? [], query);
  if (entries && !shown.length && !choosing) return null;
  return (
    <section aria-label="module library">
      <h3>module library</h3>
      {loadError && (
        <p className="field-error" role="alert">
          {loadError}
        </p>
      )}
      <ul>
        {shown.map((entry) => (
          <li
            key={entry.name}
            className="palette-op palette-module"
            tabIndex={0}
            role="button"
            aria-label={`library ${entry.name}`}
            title={`${entry.doc}\n${entry.torch}`}
            onClick={() => choose(entry)}
            onKeyDown={(e) => e.key === "Enter" && choose(entry)}
          >
            {entry.name}
          </li>
        ))}
      </ul>
      {choosing && createPortal(<ArgsDialog key={choosing.name} entry={choosing} centre={centre} />, document.body)}
    </section>
  );
}

function ArgsDialog({ entry, centre }: { entry: LibraryEntry; centre: Centre }) {
  const close = () => useLibrary.getState().choose(null);
  const [values, setValues] = useState<Record<string, unknown>>({});
  // read at submit: a field commits its text on blur or Enter, just before the submit
  const latest = useRef(values);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  const set = (name: string, value: unknown) => {
    latest.current = { ...latest.current, [name]: value };
    setValues(latest.current);
    setFieldErrors({}); // the server's were about these values together: asked again at Add
    setError(null);
  };
  const add = async () => {
    // a field whose text did not parse keeps its last good value: say so rather than add that
    if (form.current?.querySelector("[aria-invalid='true']")) {
      setError("a field above has a problem: fix it first");
      return;
    }
    setBusy(true);
    try {
      const id = await addFromLibrary(entry.name, latest.current, centre());
      if (id) close();
    } catch (e) {
      // the server's problems with arguments are shown at their fields, any other here
      if (e instanceof LibraryArgsError) setFieldErrors(e.fieldErrors);
      else setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const unplaced = Object.entries(fieldErrors).filter(([k]) => !entry.args.some((a) => a.name === k));

  return (
    <Dialog title={`Add ${entry.name}`} onClose={close}>
      <form
        ref={form}
        className="library-args"
        aria-label={`${entry.name} arguments`}
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <p>{entry.doc}</p>
        <p className="muted">
          as PyTorch: <code>{entry.torch}</code>
        </p>
        {entry.args.map((spec) => (
          <ParamField
            key={spec.name}
            spec={spec}
            value={values[spec.name]}
            serverError={fieldErrors[spec.name]}
            onChange={(v) => set(spec.name, v)}
          />
        ))}
        {error && (
          <div className="field-error" role="alert">
            {error}
          </div>
        )}
        {unplaced.map(([k, why]) => (
          <div key={k} className="field-error" role="alert">
            {why}
          </div>
        ))}
        <div className="dialog-actions">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            Add
          </button>
        </div>
      </form>
    </Dialog>
  );
}
