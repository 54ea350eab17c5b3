// The editor's frame: toolbar, palette, canvas, inspector and the analysis panels; loading the
// op registry and the first graph; keyboard shortcuts; the working copy and unsaved-changes guard.
import { ReactFlowProvider, useReactFlow } from "@xyflow/react";
import { lazy, Suspense, useEffect, useState } from "react";
import { api } from "./api/http";
import Canvas from "./canvas/Canvas";
import { layoutPositions } from "./canvas/layout";
import { emptyDocument } from "./doc/convert";
import Explain from "./panels/Explain";
import { ExportDialog, ImportDialog, OpenDialog, TemplatesDialog } from "./panels/FileDialogs";
import {
  downloadDocument,
  keepWorkingCopy,
  openDocument,
  openTemplate,
  restoreWorkingCopy,
  saveToServer,
  uploadDocument,
} from "./panels/files";
import { ClassroomDialog, RoomChip } from "./panels/Classroom";
import HelpPanel from "./panels/HelpPanel";
import Inspector from "./panels/Inspector";
import Palette from "./panels/Palette";
import RunControls from "./panels/RunControls";
import StepControls from "./panels/StepControls";
import LessonPanel from "./panels/LessonPanel";
import TensorViewer from "./panels/TensorViewer";
import TrainingPanel from "./panels/TrainingPanel";
import { useEditor } from "./store/editor";
import { getConnection, useRun } from "./store/run";
import { initTraining, useTraining } from "./store/training";

const AutogradView = lazy(() => import("./panels/AutogradView"));

type DialogName = "templates" | "open" | "export" | "import" | "help" | "classroom" | null;
type PanelName = "explain" | "tensor" | "autograd" | "training";
const PANELS: [PanelName, string][] = [
  ["explain", "chain rule"],
  ["tensor", "tensor"],
  ["autograd", "autograd graph"],
  ["training", "training"],
];

export default function App() {
  return (
    <ReactFlowProvider>
      <Editor />
    </ReactFlowProvider>
  );
}

function Editor() {
  const [dialog, setDialog] = useState<DialogName>(null);
  const [panel, setPanel] = useState<PanelName>("explain");
  const [presenter, setPresenter] = useState(false);
  const [ready, setReady] = useState(false);
  const { fitView } = useReactFlow();
  const viewing = useRun((s) => s.viewing);
  const selectedEdge = useRun((s) => s.selectedEdge);

  useEffect(() => {
    if (viewing) setPanel("tensor");
  }, [viewing]);
  useEffect(() => {
    if (selectedEdge) setPanel("explain");
  }, [selectedEdge]);
  // the canvas changes size with presenter mode: show the whole graph again
  useEffect(() => {
    requestAnimationFrame(() => fitView({ padding: 0.15, maxZoom: 1.25 }));
  }, [presenter, fitView]);
  // a training that starts (here, by a lesson, or by a room's owner) brings its panel up
  const training = useTraining((s) => s.trainId);
  useEffect(() => {
    if (training) setPanel("training");
  }, [training]);

  // start: the registry, then the graph (a ?template= link, the working copy, or a template)
  useEffect(() => {
    getConnection();
    initTraining();
    const stop = keepWorkingCopy();
    (async () => {
      try {
        useEditor.getState().setOps(await api.ops());
      } catch (e) {
        useEditor.getState().notify(`cannot load the op registry: ${(e as Error).message}`, "error");
      }
      const query = new URLSearchParams(location.search);
      const template = query.get("template");
      const graph = query.get("graph");
      try {
        if (graph) {
          const revision = Number(query.get("revision")) || undefined;
          const doc = await api.graph(graph, revision);
          openDocument(doc, { graphId: graph, revision: revision ?? null }, false);
        } else if (template) await openTemplate(template, false);
        else if (!restoreWorkingCopy()) await openTemplate("square-of-a-sum", false);
      } catch {
        useEditor.getState().load(emptyDocument());
      }
      // the link has done its job: a reload now restores the working copy, edits included
      if (graph || template) history.replaceState(null, "", location.pathname);
      setReady(true);
    })();
    // the working copy survives a reload anyway; the question is for leaving the editor
    const guard = (e: BeforeUnloadEvent) => {
      if (useEditor.getState().dirty) e.preventDefault();
    };
    window.addEventListener("beforeunload", guard);
    return () => {
      stop();
      window.removeEventListener("beforeunload", guard);
    };
  }, [fitView]);

  const layout = async () => {
    const { nodes, edges } = useEditor.getState();
    useEditor.getState().setPositions(await layoutPositions(nodes, edges));
    requestAnimationFrame(() => fitView({ padding: 0.2 }));
  };

  useShortcuts({ layout, fit: () => fitView({ padding: 0.2, duration: 200 }), help: () => setDialog("help") });

  return (
    <div className={`app ${ready ? "ready" : "loading"} ${presenter ? "presenter" : ""}`}>
      <Toolbar
        open={setDialog}
        layout={layout}
        fit={() => fitView({ padding: 0.2, duration: 200 })}
        presenter={presenter}
        setPresenter={setPresenter}
      />
      <ConnectionBanner />
      <main className="workspace">
        <Palette />
        <section className="centre">
          <Canvas />
          <StepControls />
          <LessonPanel />
          <Notice />
        </section>
        <div className="side">
          <Inspector />
          <div className="analysis">
            <div role="tablist" aria-label="analysis panels" className="tabs">
              {PANELS.map(([p, label]) => (
                <button key={p} role="tab" type="button" aria-selected={panel === p} onClick={() => setPanel(p)}>
                  {label}
                </button>
              ))}
            </div>
            {panel === "explain" && (selectedEdge ? <Explain /> : <p className="muted">Select an edge to see the chain rule on it.</p>)}
            {panel === "tensor" && (viewing ? <TensorViewer /> : <p className="muted">Pick “view value” or “view gradient” in the inspector.</p>)}
            {panel === "autograd" && (
              <Suspense fallback={<p>loading…</p>}>
                <AutogradView />
              </Suspense>
            )}
            {panel === "training" && <TrainingPanel />}
          </div>
        </div>
      </main>
      {dialog === "templates" && <TemplatesDialog onClose={() => setDialog(null)} />}
      {dialog === "open" && <OpenDialog onClose={() => setDialog(null)} />}
      {dialog === "export" && <ExportDialog onClose={() => setDialog(null)} />}
      {dialog === "import" && <ImportDialog onClose={() => setDialog(null)} />}
      {dialog === "help" && <HelpPanel onClose={() => setDialog(null)} />}
      {dialog === "classroom" && <ClassroomDialog onClose={() => setDialog(null)} />}
    </div>
  );
}

function Toolbar(props: {
  open: (d: DialogName) => void;
  layout: () => void;
  fit: () => void;
  presenter: boolean;
  setPresenter: (on: boolean) => void;
}) {
  const name = useEditor((s) => s.meta.name);
  const dirty = useEditor((s) => s.dirty);
  const revision = useEditor((s) => s.revision);
  const canUndo = useEditor((s) => s.canUndo);
  const canRedo = useEditor((s) => s.canRedo);
  const ed = useEditor.getState();
  return (
    <header className="toolbar">
      <span className="brand">Wiregrad</span>
      <span className="doc-name" aria-label="graph name">
        {name}
        {dirty ? " •" : ""}
        {revision ? <span className="muted"> r{revision}</span> : null}
      </span>
      <div role="group" aria-label="file" className="group">
        <button type="button" onClick={() => openDocument(emptyDocument())}>
          New
        </button>
        <button type="button" onClick={() => props.open("templates")}>
          Templates
        </button>
        <button type="button" onClick={() => props.open("open")}>
          Open
        </button>
        <button type="button" onClick={() => saveToServer()} title="Ctrl+S">
          Save
        </button>
        <button type="button" onClick={() => saveToServer(true)}>
          Save as new
        </button>
        <button type="button" onClick={downloadDocument}>
          Download
        </button>
        <label className="button">
          Upload
          <input
            type="file"
            accept=".json,application/json"
            aria-label="upload a graph document"
            hidden
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) uploadDocument(f);
              e.target.value = "";
            }}
          />
        </label>
        <button type="button" onClick={() => props.open("export")}>
          Export
        </button>
        <button type="button" onClick={() => props.open("import")}>
          Import
        </button>
      </div>
      <div role="group" aria-label="edit" className="group">
        <button type="button" onClick={ed.undo} disabled={!canUndo} title="Ctrl+Z">
          Undo
        </button>
        <button type="button" onClick={ed.redo} disabled={!canRedo} title="Ctrl+Shift+Z">
          Redo
        </button>
        <button type="button" onClick={props.layout} title="L">
          Auto-layout
        </button>
        <button type="button" onClick={props.fit} title="F">
          Fit view
        </button>
        <button type="button" onClick={() => props.open("help")} title="?">
          Help
        </button>
      </div>
      <div role="group" aria-label="teach" className="group">
        <button type="button" onClick={() => props.open("classroom")}>
          Classroom
        </button>
        <button type="button" aria-pressed={props.presenter} onClick={() => props.setPresenter(!props.presenter)}>
          Presenter
        </button>
        <RoomChip />
      </div>
      <RunControls />
    </header>
  );
}

function ConnectionBanner() {
  const connected = useRun((s) => s.connected);
  const ever = useRun((s) => s.everConnected);
  if (connected) return null;
  return (
    <div className="banner" role="alert">
      {ever ? "Connection to the server lost — reconnecting…" : "Connecting to the server…"}
    </div>
  );
}

function Notice() {
  const notice = useEditor((s) => s.notice);
  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => useEditor.setState({ notice: null }), notice.tone === "error" ? 8000 : 3000);
    return () => clearTimeout(t);
  }, [notice]);
  if (!notice) return null;
  return (
    <div className={`notice ${notice.tone}`} role={notice.tone === "error" ? "alert" : "status"}>
      {notice.text}
    </div>
  );
}

function useShortcuts(actions: { layout: () => void; fit: () => void; help: () => void }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const el = e.target as HTMLElement;
      if (el.closest("input, textarea, select, [contenteditable=true]")) return;
      if (document.querySelector("[role=dialog][aria-modal=true]")) return;
      const ed = useEditor.getState();
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      const handled = () => e.preventDefault();
      if (mod && key === "enter") {
        handled();
        if (e.shiftKey) {
          const btn = document.querySelector<HTMLButtonElement>("button[aria-expanded]");
          btn?.click();
        } else useRun.getState().start("forward");
      } else if (mod && key === "z") {
        handled();
        if (e.shiftKey) ed.redo();
        else ed.undo();
      } else if (mod && key === "y") {
        handled();
        ed.redo();
      } else if (mod && key === "c") ed.copySelection();
      else if (mod && key === "v") ed.paste();
      else if (mod && key === "d") {
        handled();
        ed.duplicateSelection();
      } else if (mod && key === "a") {
        handled();
        ed.select(ed.nodes.map((n) => n.id));
      } else if (mod && key === "s") {
        handled();
        saveToServer();
      } else if (!mod && (key === "delete" || key === "backspace")) {
        handled();
        ed.deleteSelection();
      } else if (!mod && key === "f") actions.fit();
      else if (!mod && key === "l") actions.layout();
      else if (e.key === "?") actions.help();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [actions]);
}
