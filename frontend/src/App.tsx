// The editor's frame: toolbar, palette, canvas, inspector and the analysis panels; loading the
// op registry and the first graph; the working copy and the unsaved-changes guard.
import { ReactFlowProvider, useReactFlow } from "@xyflow/react";
import { lazy, Suspense, useEffect, useRef, useState } from "react";
import { hostChannel } from "./api/host";
import { api } from "./api/http";
import Canvas from "./canvas/Canvas";
import { useReadableFit } from "./canvas/fit";
import { layoutPositions } from "./canvas/layout";
import { emptyDocument } from "./doc/convert";
import { keepWorkingCopy, openDocument, openTemplate, restoreWorkingCopy } from "./doc/files";
import { followHost } from "./doc/hostDocument";
import Explain from "./panels/analysis/Explain";
import { ExportDialog, ImportDialog, OpenDialog, TemplatesDialog } from "./panels/dialogs/FileDialogs";
import { ClassroomDialog, RoomBanner } from "./panels/classroom/Classroom";
import HelpPanel from "./panels/dialogs/HelpPanel";
import Inspector from "./panels/inspector/Inspector";
import LessonPanel from "./panels/classroom/LessonPanel";
import Palette from "./panels/palette/Palette";
import { ConnectionBanner, Notice } from "./panels/toolbar/StatusLines";
import StepControls from "./panels/onCanvas/StepControls";
import TensorViewer, { TensorWindow } from "./panels/analysis/TensorViewer";
import type { DialogName } from "./panels/dialogs/dialogName";
import Toolbar from "./panels/toolbar/Toolbar";
import TrainingPanel from "./panels/training/TrainingPanel";
import ProjectorTraining from "./panels/training/ProjectorTraining";
import QuizPanel from "./panels/classroom/QuizPanel";
import { useProjectorRefit } from "./panels/classroom/projectorFit";
import { useShortcuts } from "./shortcuts";
import { useEditor } from "./store/editor";
import { startReactions } from "./store/reactions";
import { useRun } from "./store/run";
import { useTraining } from "./store/training";
import { useRoom } from "./store/room";
import { usePace } from "./store/pace";

const AutogradView = lazy(() => import("./panels/analysis/AutogradView"));

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
  const fit = useReadableFit();
  const viewing = useRun((s) => s.viewing);
  const selectedEdge = useRun((s) => s.selectedEdge);

  useEffect(() => {
    // (a tensor opened while the viewer is popped out shows in its window: the tab stays)
    if (viewing && !useRun.getState().viewWindow) setPanel("tensor");
  }, [viewing]);
  useEffect(() => {
    if (selectedEdge) setPanel("explain");
  }, [selectedEdge]);
  // presenting, a training shows beside the graph (ProjectorTraining) until the teacher closes
  // it or another graph opens; a new training brings it back. (Graph first: a room joiner's
  // page opens the room's graph and takes its training in one go, and the training wins.)
  const opened = useEditor((s) => s.opened);
  const trainId = useTraining((s) => s.trainId);
  const [chartClosed, setChartClosed] = useState(false);
  useEffect(() => setChartClosed(true), [opened]);
  // another graph: the tensor view's tensor was the last graph's, and the side panel starts
  // again from the chain rule (a training the new graph brings still takes the panel: below)
  useEffect(() => {
    useRun.getState().view(null);
    setPanel("explain");
  }, [opened]);
  useEffect(() => setChartClosed(false), [trainId]);
  const projectorTraining = presenter && trainId !== null && !chartClosed;
  // the canvas changes size with presenter mode and the training beside it: show the whole
  // graph again (presenting: with a thin margin, so that the graph is drawn as large as the
  // screen allows)
  useEffect(() => {
    requestAnimationFrame(() => fit({ padding: presenter ? 0.04 : 0.15, maxZoom: 1.25, whole: presenter }));
  }, [presenter, projectorTraining, fit]);
  useProjectorRefit(presenter); // the lesson's and a question's bands change the canvas's height
  // a training started while presenting goes at classroom pace (store/pace.ts)
  useEffect(() => usePace.getState().setPresenting(presenter), [presenter]);
  // a training that starts (here, by a lesson, or by a room's owner) brings its panel up
  const following = useRun((s) => s.following); // a student in a room: styles.css hides editing
  const training = useTraining((s) => s.trainId);
  useEffect(() => {
    if (training) setPanel("training");
  }, [training]);

  // start: the registry, then the graph (a ?template= link, the working copy, or a template)
  useEffect(() => {
    // the connection's events to the stores, and the stores' reactions to each other
    const stopReactions = startReactions();
    // in a notebook the kernel keeps the document (doc/hostDocument.ts), else the tab does
    const host = hostChannel();
    const stop = host ? followHost(host) : keepWorkingCopy();
    // an exported view shows its graph as a student following a room sees the teacher's
    if (host?.readOnly) useRun.getState().setFollowing(true);
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
        if (host) {
          if (host.document) openDocument(host.document, {}, false);
          else useEditor.getState().load(emptyDocument());
        } else if (graph) {
          const revision = Number(query.get("revision")) || undefined;
          const share = query.get("share") ?? undefined; // someone's share link: read-only
          const stored = await api.storedGraph(graph, revision, share);
          const doc = stored.doc;
          if (share) {
            // not ours to save over: saving makes a copy of our own (a fork)
            openDocument(doc, {}, false);
            useEditor.getState().notify("a shared graph: save keeps a copy of your own");
          } else {
            // the revision the server sent: a save of it names it as its base
            openDocument(doc, { graphId: graph, revision: stored.revision }, false);
          }
        } else if (template) await openTemplate(template, false);
        else if (!restoreWorkingCopy()) await openTemplate("square-of-a-sum", false);
      } catch {
        useEditor.getState().load(emptyDocument());
      }
      // the link has done its job: a reload now restores the working copy, edits included
      if (graph || template) history.replaceState(null, "", location.pathname);
      // into a room (a ?room= link, or this tab's room after a reload: store/room.ts) once the
      // page's own graph is there, so that the room's graph is the one that stays
      if (!host) useRoom.getState().init(); // rooms are a server's: a notebook has none
      setReady(true);
    })();
    // the working copy survives a reload anyway; the question is for leaving the editor
    const guard = (e: BeforeUnloadEvent) => {
      if (useEditor.getState().dirty) e.preventDefault();
    };
    window.addEventListener("beforeunload", guard);
    return () => {
      stopReactions();
      stop();
      window.removeEventListener("beforeunload", guard);
    };
  }, [fitView]);

  const appRef = useRef<HTMLDivElement>(null);
  const layout = async () => {
    const { nodes, edges } = useEditor.getState();
    // long chains wrap to its shape (the app's own canvas: in a notebook it is in a shadow root)
    const canvas = appRef.current?.querySelector(".canvas")?.getBoundingClientRect();
    useEditor.getState().setPositions(await layoutPositions(nodes, edges, canvas));
    requestAnimationFrame(() => fit({ padding: 0.2 }));
  };

  useShortcuts({ layout, fit: () => fit({ padding: 0.2, duration: 200 }), help: () => setDialog("help") }, appRef);

  return (
    <div
      ref={appRef}
      className={`app ${ready ? "ready" : "loading"} ${presenter ? "presenter" : ""} ${following ? "following" : ""}`}>
      <Toolbar
        open={setDialog}
        layout={layout}
        fit={() => fit({ padding: 0.2, duration: 200 })}
        presenter={presenter}
        setPresenter={setPresenter}
      />
      <ConnectionBanner />
      <RoomBanner />
      <main className="workspace">
        <Palette />
        <section className="centre">
          <Canvas presenter={presenter} />
          <StepControls />
          <LessonPanel />
          {!projectorTraining && <QuizPanel />}
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
        {projectorTraining && (
          // a 1024 px projector has no room for the lesson and a question side by side beside
          // a training: the question joins the training's column (panels/classroom/quiz.css)
          <div className="projector-side">
            <QuizPanel />
            <ProjectorTraining onClose={() => setChartClosed(true)} />
          </div>
        )}
        <TensorWindow />
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
