// Where the stores meet: the one place that hands the connection's pushed events to the stores
// they are for, and makes one store's change another's action. No store imports another to
// drive it (a store may read another's state, and ask the editor to notify); what one store's
// change means for another is written here, and nowhere else. App starts it when the editor
// mounts and stops it when it goes (every listener and subscription is taken off).
import type { GraphDocument, RoomTraining, RunFinished, WireRecord } from "../api/types";
import { getConnection } from "./connection";
import { useEditor } from "./editor";
import { forgetIfEdited } from "./fdCheck";
import { useLesson } from "./lesson";
import { useOverlay } from "./overlay";
import { currentPace, type Pace, usePace } from "./pace";
import { type QuizView, type Spread, useQuiz } from "./quiz";
import { type RoomWelcome, useRoom } from "./room";
import { type RunStarted, useRun } from "./run";
import { keepShapes } from "./shapes";
import { snapshotValues, TRAIN_EVENTS, useTraining } from "./training";

/** Start every reaction; returns the function that stops them all. */
export function startReactions(): () => void {
  // (the shapes store asks the server for the graph's shapes as it changes: store/shapes.ts)
  const stops = [listenToServer(), ...storeReactions(), roomSync(), keepShapes()];
  return () => stops.forEach((stop) => stop());
}

/** The connection's pushed events, each to the store it is for. */
function listenToServer(): () => void {
  const conn = getConnection();
  const run = () => useRun.getState();
  const room = () => useRoom.getState();
  // a room event for this page as a follower of that room
  const following = (m: { code: string }) => room().role === "follower" && m.code === room().code;
  const offs = [
    conn.onStatus((connected) => run().setConnected(connected)),
    conn.onRuns({
      onStarted: (runId, mode, target, adopt) => run().started(runId, mode, target, adopt),
      onRecords: (runId, records) => run().received(runId, { records }),
      onFinished: (finished) => run().received(finished.run_id, { finished }),
    }),
    ...TRAIN_EVENTS.map((event) =>
      conn.on<{ train_id: string }>(event, (payload) => useTraining.getState().received({ event, payload })),
    ),
    // rooms (store/room.ts): back in after a reconnect, the banner while the server is gone
    conn.on("connect", () => room().reconnected()),
    conn.on("disconnect", () => room().disconnected()),
    conn.on<{ code: string }>("room_closed", (m) => room().closed(m.code)),
    // a follower's page shows the owner's graph, step, lesson, pace and selected wire
    conn.on<{ code: string; graph: GraphDocument }>("room_graph", (m) => {
      if (following(m)) follow(m.graph);
    }),
    conn.on<{ code: string; index: number | null }>("room_step", (m) => {
      if (room().role === "follower") showStep(m.index); // (whichever room: the one followed)
    }),
    conn.on<{ code: string; index: number }>("room_lesson", (m) => {
      if (following(m)) useLesson.getState().go(m.index);
    }),
    conn.on<{ code: string; steps_per_second: Pace }>("room_pace", (m) => {
      if (following(m)) usePace.getState().setRoomPace(m.steps_per_second);
    }),
    conn.on<{ code: string; edge: string | null }>("room_select", (m) => {
      if (following(m)) showSelected(m.edge);
    }),
    // this page fell behind the room (a slow network): the room's latest state instead of
    // the packets it skipped (backend/server/room_delivery.py)
    conn.on<{
      code: string;
      run_started?: RunStarted | null;
      records?: WireRecord[];
      run_finished?: RunFinished | null;
      training?: RoomTraining | null;
    }>("room_catch_up", (m) => {
      if (!following(m)) return;
      if ("training" in m) useTraining.getState().catchUp(m.training ?? null, []);
      else {
        const started = m.run_started ?? null;
        const records = started ? conn.expandRecords(started.run_id, m.records ?? []) : [];
        run().catchUp(started, records, m.run_finished ?? null);
      }
    }),
    // a question to the class (store/quiz.ts)
    conn.on<{ code: string; quiz: QuizView | null }>("room_quiz", (m) => {
      if (m.code === room().code) useQuiz.getState().show(m.quiz);
    }),
    conn.on<Spread & { code: string; quiz_id: string }>("room_answers", (m) => useQuiz.getState().answers(m)),
  ];
  return () => offs.forEach((off) => off());
}

/** Show the owner's graph, read-only; an update keeps the view (`keepView`) and what the
 * follower has selected (a student reading a node's fields keeps them open while the owner
 * edits), a join fits it. */
function follow(graph: GraphDocument, keepView = true) {
  // a load is not an edit
  useEditor.getState().load(graph, { dirty: false, keepView, keepSelection: keepView });
  useEditor.getState().setReadOnly(true);
}

/** The owner's step mode on a follower's page (null: the whole run again). */
function showStep(index: number | null) {
  const run = useRun.getState();
  if (index === null) {
    if (run.step) run.exitStep();
    return;
  }
  if (!run.step) run.enterStep();
  useRun.getState().setPlaying(false);
  useRun.getState().stepTo(index);
}

/** The owner's selected wire, on a follower's page: highlighted on the canvas, and its chain
 * rule in the side panel (null: nothing selected). */
function showSelected(edge: string | null) {
  useRun.getState().selectEdge(edge);
  useEditor.getState().markSelectedEdge(edge);
}

/** What a room shows a page that joins it, each part in its store. */
function welcome(w: RoomWelcome) {
  const run = useRun.getState();
  run.setFollowing(true);
  if (w.graph) follow(w.graph, false);
  else useEditor.getState().setReadOnly(true);
  // the lesson step the teacher shows, and the pace the class watches
  useLesson.getState().go(w.lesson ?? 0);
  usePace.getState().setRoomPace(w.pace ? w.pace.steps_per_second : undefined);
  // what the room has already seen of the owner's last run; if it is still going, its next
  // packets continue it here
  const started = w.run_started ?? null;
  const records = started ? getConnection().expandRecords(started.run_id, w.records ?? []) : [];
  run.catchUp(started, records, w.run_finished ?? null);
  // where the owner is in step mode, the lesson's current record
  if (typeof w.step === "number" && records.length) showStep(w.step);
  // the owner's training so far (the chart, the step, the boundary), then what came since
  useTraining.getState().catchUp(w.training ?? null, w.early);
  // the wire the teacher has selected, and the question the teacher asks (its number hidden
  // here until the reveal)
  showSelected(w.selected ?? null);
  useQuiz.getState().show(w.quiz ?? null);
}

/** A follower's page out of its room: the graph on screen is its own again. */
function endFollowing() {
  useQuiz.getState().leave();
  useEditor.getState().setReadOnly(false);
  usePace.getState().setRoomPace(undefined);
  useRun.getState().setFollowing(false);
}

/** One store's changes, as other stores' actions. */
function storeReactions(): (() => void)[] {
  // the room the quiz asks in, and the pace a leader's training gets; presenting hides a
  // question's number on the projector
  const room = useRoom.getState();
  useQuiz.getState().setRoom(room.code, room.role);
  usePace.getState().setLeading(room.role === "owner");
  useQuiz.getState().setPresenting(usePace.getState().presenting);
  return [
    useRoom.subscribe((s, prev) => {
      if (s.code !== prev.code || s.role !== prev.role) {
        useQuiz.getState().setRoom(s.code, s.role);
        usePace.getState().setLeading(s.role === "owner");
        if (prev.role === "follower" && s.role !== "follower") endFollowing();
        else if (prev.role === "owner" && s.role !== "owner") useQuiz.getState().leave();
      }
      if (s.welcome && s.welcome !== prev.welcome) welcome(s.welcome);
    }),
    usePace.subscribe((s, prev) => {
      if (s.presenting !== prev.presenting) useQuiz.getState().setPresenting(s.presenting);
    }),
    // a lesson step that asks the room: its number hidden from the moment the step shows
    useLesson.subscribe((s, prev) => {
      if (s.index !== prev.index || s.opened !== prev.opened || s.hidden !== prev.hidden) useQuiz.getState().lessonStepShown();
    }),
    useRun.subscribe((s, prev) => {
      if (s.annotations === prev.annotations) return;
      // records and step mode rebuild the annotations: a question's number is hidden again
      useQuiz.getState().rehide();
      useOverlay.getState().recompute();
    }),
    useTraining.subscribe((s, prev) => {
      if (s.snapshot === prev.snapshot) return;
      useOverlay.getState().snapshotChanged(s.snapshot, prev.snapshot);
      // the parameters' current values and gradients, written on their nodes
      if (s.snapshot) {
        const { values, grads } = snapshotValues(s.snapshot);
        useRun.getState().showValues(values, grads);
      }
    }),
    useEditor.subscribe((s, prev) => {
      // another graph: the last one's training is not this one's (a room joiner's page opens
      // the room's graph first and catches up with its training after)
      if (s.opened !== prev.opened) useTraining.getState().openedAnother();
      if (s.nodes !== prev.nodes && useOverlay.getState().stat === "dead") useOverlay.getState().recompute();
      forgetIfEdited(s, prev);
    }),
  ];
}

/** While this page leads a room, what it shows goes to the room as it happens: each entry into
 * the room (a start, a resume after a reload or a restart) sends it all anew. */
function roomSync(): () => void {
  let stop: (() => void) | null = null;
  const restart = () => {
    stop?.();
    stop = null;
    const { code, role } = useRoom.getState();
    if (code && role === "owner") stop = sendToRoom(code);
  };
  restart();
  const unsubscribe = useRoom.subscribe((s, prev) => {
    if (s.entered !== prev.entered || s.code !== prev.code || s.role !== prev.role) restart();
  });
  return () => {
    unsubscribe();
    stop?.();
  };
}

/** The owner's edits, step mode, lesson step, pace and selected wire go to room `code` as they
 * happen (edits debounced); returns the function that stops sending. */
function sendToRoom(code: string): () => void {
  const conn = getConnection();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const sendGraph = () => conn.request("room_update", { code, graph: useEditor.getState().document() }).catch(() => {});
  sendGraph();
  const stopGraph = useEditor.subscribe((s, prev) => {
    if (s.nodes === prev.nodes && s.edges === prev.edges && s.meta === prev.meta) return;
    clearTimeout(timer);
    timer = setTimeout(sendGraph, 150);
  });
  const sendStep = (index: number | null) => conn.request("room_step", { code, index }).catch(() => {});
  const stopStep = useRun.subscribe((s, prev) => {
    if (s.step && s.step.index !== prev.step?.index) sendStep(s.step.index);
    else if (!s.step && prev.step) sendStep(null); // out of step mode: joiners see the whole run
  });
  // the lesson step shown and the training pace, so that students (and joiners) see the
  // teacher's; sent now too: a room reopened after a restart has lost them
  const sendLesson = (index: number) => conn.request("room_lesson", { code, index }).catch(() => {});
  const sendPace = (pace: Pace) => conn.request("room_pace", { code, steps_per_second: pace }).catch(() => {});
  const lessonIndex = () => (useLesson.getState().opened === useEditor.getState().opened ? useLesson.getState().index : 0);
  let lesson = lessonIndex();
  let pace = currentPace();
  sendLesson(lesson);
  sendPace(pace);
  sendStep(useRun.getState().step?.index ?? null);
  const lessonChanged = () => {
    const now = lessonIndex();
    if (now !== lesson) sendLesson((lesson = now));
  };
  const paceChanged = () => {
    const now = currentPace();
    if (now !== pace) sendPace((pace = now));
  };
  const stopLesson = useLesson.subscribe(lessonChanged);
  const stopOpened = useEditor.subscribe((s, prev) => {
    if (s.opened !== prev.opened) lessonChanged();
  });
  const stopPace = usePace.subscribe(paceChanged);
  // the wire the teacher selects, highlighted on the students' canvases
  const sendSelected = (edge: string | null) => conn.request("room_select", { code, edge }).catch(() => {});
  sendSelected(useRun.getState().selectedEdge);
  const stopSelected = useRun.subscribe((s, prev) => {
    if (s.selectedEdge !== prev.selectedEdge) sendSelected(s.selectedEdge);
  });
  // a question asked before a reload or a restart, with its answers so far
  void useQuiz.getState().restore(code);
  return () => {
    stopSelected();
    clearTimeout(timer);
    stopGraph();
    stopStep();
    stopLesson();
    stopOpened();
    stopPace();
  };
}
