// Dialogs of the File menu: templates, graphs stored on the server (with their revisions),
// code export, and code import.
import { useEffect, useMemo, useState } from "react";
import { api } from "../../api/http";
import { shareLink } from "../../api/owner";
import type { GraphDocument, GraphInfo, RevisionInfo } from "../../api/types";
import { freshDocument, type NodeParams } from "../../doc/freshWeights";
import { useEditor } from "../../store/editor";
import { useTraining } from "../../store/training";
import Dialog from "./Dialog";
import { openDocument, openTemplate } from "../../doc/files";
import { bytesBase64, downloadBytes, exportDownload, type ExportedCode } from "../../doc/exportFiles";

export function TemplatesDialog({ onClose }: { onClose: () => void }) {
  const [list, setList] = useState<{ id: string; name: string; description: string }[] | null>(null);
  useEffect(() => {
    api.templates().then(setList, (e) => useEditor.getState().notify(String(e.message), "error"));
  }, []);
  return (
    <Dialog title="Open a template" onClose={onClose} wide>
      {!list && <p>loading…</p>}
      <ul className="pick-list">
        {list?.map((t) => (
          <li key={t.id}>
            <button
              type="button"
              aria-label={`template ${t.name}`}
              onClick={async () => (await openTemplate(t.id)) && onClose()}
            >
              <b>{t.name}</b>
              <span className="muted">{t.description.slice(0, 160)}</span>
            </button>
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

/** When a stored graph or revision was saved: the server gives Unix seconds, Date wants ms. */
export function savedAt(seconds: number, locale?: string): string {
  return new Date(seconds * 1000).toLocaleString(locale);
}

export function OpenDialog({ onClose }: { onClose: () => void }) {
  const [graphs, setGraphs] = useState<GraphInfo[] | null>(null);
  const [revisions, setRevisions] = useState<Record<string, RevisionInfo[]>>({});
  useEffect(() => {
    api.graphs().then(setGraphs, (e) => useEditor.getState().notify(String(e.message), "error"));
  }, []);
  const open = async (id: string, revision?: number) => {
    // the revision the server sent (the head may have moved since the list was read): a save
    // of it names it as its base (store/saveConflict.ts)
    const { doc, revision: sent } = await api.storedGraph(id, revision);
    const head = graphs?.find((g) => g.id === id)?.revision ?? null;
    if (openDocument(doc, { graphId: id, revision: sent ?? revision ?? head })) onClose();
  };
  return (
    <Dialog title="Open a saved graph" onClose={onClose} wide>
      {graphs && !graphs.length && <p className="muted">Nothing is saved on this server yet.</p>}
      <ul className="pick-list">
        {graphs?.map((g) => (
          <li key={g.id}>
            <button type="button" aria-label={`open ${g.name}`} onClick={() => open(g.id)}>
              <b>{g.name}</b>
              <span className="muted">
                revision {g.revision} · {savedAt(g.updated)}
              </span>
            </button>
            <button
              type="button"
              className="small"
              aria-label={`revisions of ${g.name}`}
              onClick={async () => setRevisions({ ...revisions, [g.id]: await api.revisions(g.id) })}
            >
              revisions
            </button>
            {g.share && (
              <button
                type="button"
                className="small"
                aria-label={`copy the share link of ${g.name}`}
                title="anyone with this link can open the graph read-only and save a copy"
                onClick={async () => {
                  const link = shareLink(g.id, g.share ?? "");
                  await navigator.clipboard?.writeText(link).catch(() => {});
                  useEditor.getState().notify(`share link copied: ${link}`);
                }}
              >
                share link
              </button>
            )}
            {revisions[g.id] && (
              <ul className="revisions">
                {revisions[g.id].map((r) => (
                  <li key={r.revision}>
                    <button type="button" className="small" onClick={() => open(g.id, r.revision)}>
                      revision {r.revision} · {savedAt(r.created)}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

/** The graph as it was before its training, where a training wrote values into it that are
 * still there (doc/freshWeights.ts: values edited since are kept); null where it holds none. */
export function beforeTraining(
  doc: GraphDocument,
  seeded: { opened: number; params: NodeParams } | null,
  written: NodeParams | null,
  opened: number,
): GraphDocument | null {
  if (!seeded || !written || seeded.opened !== opened) return null;
  return freshDocument(doc, seeded.params, written);
}

export function ExportDialog({ onClose }: { onClose: () => void }) {
  const [flavor, setFlavor] = useState<"engine" | "torch">("torch");
  const [weights, setWeights] = useState<"trained" | "initial">("trained");
  // the script prints what a person prints; traced, every value and gradient, one line each
  const [trace, setTrace] = useState(false);
  const [out, setOut] = useState<ExportedCode>({ code: "" });
  const code = out.code;
  const [error, setError] = useState<string | null>(null);
  // after a training: the choice of the weights the script starts from
  const initial = useMemo(() => {
    const ed = useEditor.getState();
    const { seeded, written } = useTraining.getState();
    return beforeTraining(ed.document(), seeded, written, ed.opened);
  }, []);
  useEffect(() => {
    const ed = useEditor.getState();
    setError(null);
    const graph = initial && weights === "initial" ? initial : ed.document();
    api.exportCode(graph, flavor, initial ? weights : undefined, trace).then(setOut, (e) => {
      setOut({ code: "" });
      setError(
        [e.message, ...(e.problems ?? []).map((p: { node?: string; message: string }) => `${p.node ? `${p.node}: ` : ""}${p.message}`)].join("\n"),
      );
    });
  }, [flavor, weights, initial, trace]);
  const name = useEditor.getState().meta.name.replace(/[^\w.-]+/g, "_") || "graph";
  return (
    <Dialog title="Export as Python" onClose={onClose} wide>
      <div role="tablist" aria-label="code flavour" className="tabs">
        {(["torch", "engine"] as const).map((f) => (
          <button key={f} role="tab" aria-selected={flavor === f} type="button" onClick={() => setFlavor(f)}>
            {f === "torch" ? "PyTorch" : "Wiregrad engine"}
          </button>
        ))}
      </div>
      {initial && (
        <div role="tablist" aria-label="weights" className="tabs">
          {(["trained", "initial"] as const).map((w) => (
            <button key={w} role="tab" aria-selected={weights === w} type="button" onClick={() => setWeights(w)}>
              {w === "trained" ? "from trained weights" : "from initial weights"}
            </button>
          ))}
        </div>
      )}
      <label>
        <input type="checkbox" checked={trace} onChange={(e) => setTrace(e.target.checked)} /> print every value and
        gradient
      </label>
      {out.weights && !error && (
        <p className="muted" aria-label="weights file">
          The weights are in <code>{`${name}_${flavor}.safetensors`}</code>, which the script loads from beside
          itself: the .zip holds both files.
        </p>
      )}
      {error ? (
        <pre className="field-error" role="alert">{error}</pre>
      ) : (
        <pre className="code" aria-label="exported code" tabIndex={0}>
          {code}
        </pre>
      )}
      <div className="dialog-actions">
        <button type="button" disabled={!code} onClick={() => navigator.clipboard?.writeText(code).then(() => useEditor.getState().notify("code copied"))}>
          copy
        </button>
        <button
          type="button"
          disabled={!code}
          onClick={() => {
            const file = exportDownload(`${name}_${flavor}`, out);
            downloadBytes(file.name, file.data, file.type);
          }}
        >
          {out.weights ? "download .zip" : "download .py"}
        </button>
      </div>
    </Dialog>
  );
}

export function ImportDialog({ onClose }: { onClose: () => void }) {
  const [code, setCode] = useState("");
  // the .safetensors file an exported script loads from beside itself, as base64
  const [weights, setWeights] = useState<string | undefined>(undefined);
  const [problems, setProblems] = useState<string[]>([]);
  // the document of the lines that could be read, offered beside the problems
  const [partial, setPartial] = useState<GraphDocument | null>(null);
  const submit = async () => {
    setPartial(null);
    try {
      const doc = await api.importCode(code, weights);
      if (openDocument(doc)) onClose();
    } catch (e) {
      const err = e as { message: string; problems?: { message: string }[]; partial?: GraphDocument | null };
      setProblems([err.message, ...(err.problems ?? []).map((p) => p.message)]);
      setPartial(err.partial ?? null);
    }
  };
  return (
    <Dialog title="Import Python" onClose={onClose} wide>
      <p className="muted">
        Paste a script exported by Wiregrad (engine or PyTorch). It is read, never run.
      </p>
      <textarea aria-label="python code" rows={16} value={code} onChange={(e) => setCode(e.target.value)} spellCheck={false} />
      <label>
        its weights file (where it loads one):{" "}
        <input
          type="file"
          accept=".safetensors"
          aria-label="weights file"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            setWeights(file ? bytesBase64(new Uint8Array(await file.arrayBuffer())) : undefined);
          }}
        />
      </label>
      {problems.length > 0 && (
        <ul className="field-error" role="alert">
          {problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={submit} disabled={!code.trim()}>
          import
        </button>
        {partial && (
          <button type="button" onClick={() => openDocument(partial) && onClose()}>
            import without these lines
          </button>
        )}
      </div>
    </Dialog>
  );
}
