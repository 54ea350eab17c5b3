// Classroom rooms (docs/training.md "Socket.IO: rooms"): a teacher starts a room and gets a
// code; students who join follow the teacher's graph, runs, trainings and step mode live, and
// can fork to an editable copy. Only the owner drives.
// The room is remembered for the tab (sessionStorage: the code, the role and the owner's
// secret), so a reload or a reconnect (to this server process or another) returns the owner to
// its room with `room_resume` and a follower with `room_join`, by themselves.
import { create } from "zustand";
import { expandRecords } from "../api/summaryRows";
import type { GraphDocument, RoomTraining, RunFinished, WireRecord } from "../api/types";
import { useEditor } from "./editor";
import { getConnection, type RunStarted, useRun } from "./run";
import { catchUpTraining, type TrainPacket } from "./training";
import { useLesson } from "./lesson";
import { currentPace, type Pace, usePace } from "./pace";
import { leaveQuiz, quizRoom, type QuizView, refreshHiding, restoreQuiz, showQuiz } from "./quiz";

/** The owner's selected wire, on a follower's page: highlighted on the canvas, and its chain
 * rule in the side panel (null: nothing selected). */
function showSelected(edge: string | null) {
  useRun.getState().selectEdge(edge);
  useEditor.setState((s) => ({
    edges: s.edges.map((e) => (!!e.selected === (e.id === edge) ? e : { ...e, selected: e.id === edge })),
  }));
}

/** The owner's lesson step, shown on a follower's page for the graph it has open. */
function showLesson(index: number) {
  useLesson.setState({ opened: useEditor.getState().opened, index, hidden: false });
}

export interface RoomState {
  code: string | null;
  role: "owner" | "follower" | null;
  /** What is wrong with the room right now, said plainly in a banner on the page (the
   * server is gone, the room is not open yet after a restart, it could not be reopened). */
  trouble: string | null;
  create(): Promise<void>;
  join(code: string): Promise<string | null>;
  leave(): Promise<void>;
  fork(): Promise<void>;
  dismissTrouble(): void;
}

let listening = false;
let stopSync: (() => void) | null = null;

interface SavedRoom {
  code: string;
  role: "owner" | "follower";
  secret?: string;
}
const SAVED = "wiregrad.room";

function saveRoom(room: SavedRoom | null) {
  try {
    if (room) sessionStorage.setItem(SAVED, JSON.stringify(room));
    else sessionStorage.removeItem(SAVED);
  } catch {
    /* storage disabled: a reload leaves the room */
  }
}

function savedRoom(): SavedRoom | null {
  try {
    const room = JSON.parse(sessionStorage.getItem(SAVED) ?? "null");
    return room && typeof room.code === "string" ? room : null;
  } catch {
    return null;
  }
}

/** How long, and how often, a follower whose room is not there (the server restarted, and the
 * owner's page has not reopened it yet) keeps trying to rejoin it. */
export const REJOIN_FOR_MS = 5 * 60_000;
export const REJOIN_EVERY_MS = 2_000;
let waitingSince: number | null = null;
let retry: ReturnType<typeof setTimeout> | undefined;

function stopWaiting() {
  clearTimeout(retry);
  waitingSince = null;
}

/** Back into the tab's room after a reload, a reconnect or a server restart. */
async function rejoin() {
  const saved = savedRoom();
  if (!saved) return;
  const conn = getConnection();
  if (saved.role === "owner" && saved.secret) {
    type Reply = { code?: string; error?: string; restored?: boolean };
    const reply: Reply = await conn
      .request<Reply>("room_resume", { code: saved.code, secret: saved.secret })
      .catch((err: Error) => ({ error: err.message }));
    if (reply.code) {
      stopSync?.();
      useRoom.setState({ code: reply.code, role: "owner", trouble: null });
      startSync(reply.code);
      if (reply.restored)
        useEditor.getState().notify(`room ${reply.code} is open again: your students rejoin it by themselves`);
      return;
    }
    saveRoom(null);
    useRoom.setState({
      code: null,
      role: null,
      trouble: `Room ${saved.code} could not be reopened (${reply.error}). Start a new room from Classroom and share its code.`,
    });
  } else if (saved.role === "follower") {
    const problem = await useRoom.getState().join(saved.code).catch((err: Error) => err.message);
    if (!problem) return;
    // not there (yet): after a restart the room is back once the owner's page reconnects
    waitingSince ??= Date.now();
    if (Date.now() - waitingSince < REJOIN_FOR_MS) {
      useRoom.setState({
        code: saved.code,
        role: "follower",
        trouble: `Room ${saved.code} is not open right now (${problem}): the server may have restarted. This page rejoins by itself when your teacher is back.`,
      });
      clearTimeout(retry);
      retry = setTimeout(() => void rejoin(), REJOIN_EVERY_MS);
      return;
    }
    stopWaiting();
    saveRoom(null);
    endFollowing();
    useRoom.setState({
      code: null,
      role: null,
      trouble: `Room ${saved.code} did not come back: the graph on your screen is yours now.`,
    });
  }
}

/** At start: listen for room events, and go back into the tab's room if it had one. */
export function initRooms() {
  const linked = roomFromLink();
  // a room link makes this tab a follower of that room, unless it leads it already
  if (linked && /^[A-Z2-9]{6}$/.test(linked)) {
    if (savedRoom()?.code !== linked) saveRoom({ code: linked, role: "follower" });
  } else if (linked !== null)
    useRoom.setState({ trouble: `The link's room code “${linked}” is not a room code: six letters and digits, like 2TB2ZS.` });
  listen();
  if (getConnection().socket.connected) void rejoin();
}

/** The link to share for room `code`: opening it joins the room. */
export function roomLink(code: string): string {
  return `${location.origin}/?room=${encodeURIComponent(code)}`;
}

/** The code of a `?room=` link, taken out of the address bar (a reload rejoins from the tab's
 * storage, and a forked copy is not pulled back into the room by it). */
export function roomFromLink(loc: Location = location, hist: History = history): string | null {
  const query = new URLSearchParams(loc.search);
  const raw = query.get("room");
  if (raw === null) return null;
  query.delete("room");
  const rest = query.toString();
  hist.replaceState(null, "", loc.pathname + (rest ? `?${rest}` : "") + loc.hash);
  return raw.trim().toUpperCase().slice(0, 40);
}

function listen() {
  if (listening) return;
  listening = true;
  // (here, not at import: the room and pace stores import each other)
  quizRoom(
    () => useRoom.getState().code,
    () => useRoom.getState().role,
    () => usePace.getState().presenting,
  );
  usePace.subscribe((s, prev) => {
    if (s.presenting !== prev.presenting) refreshHiding();
  });
  const conn = getConnection();
  conn.on("connect", () => void rejoin());
  conn.on("disconnect", () => {
    const { code } = useRoom.getState();
    if (code)
      useRoom.setState({
        trouble: `Lost the server: room ${code} carries on when it is back (this page reconnects by itself).`,
      });
  });
  conn.on<{ code: string; graph: GraphDocument }>("room_graph", (m) => {
    if (useRoom.getState().role === "follower" && m.code === useRoom.getState().code) follow(m.graph);
  });
  conn.on<{ code: string; index: number | null }>("room_step", (m) => {
    if (useRoom.getState().role !== "follower") return;
    const run = useRun.getState();
    if (m.index === null) {
      // the teacher left step mode: the whole run again
      if (run.step) run.exitStep();
      return;
    }
    if (!run.step) run.enterStep();
    useRun.getState().setPlaying(false);
    useRun.getState().stepTo(m.index);
  });
  conn.on<{ code: string; index: number }>("room_lesson", (m) => {
    if (useRoom.getState().role === "follower" && m.code === useRoom.getState().code) showLesson(m.index);
  });
  conn.on<{ code: string; steps_per_second: Pace }>("room_pace", (m) => {
    if (useRoom.getState().role === "follower" && m.code === useRoom.getState().code)
      usePace.setState({ room: m.steps_per_second });
  });
  // this page fell behind the room (a slow network): the room's latest state instead of
  // the packets it skipped (backend/server/room_delivery.py)
  conn.on<{
    code: string;
    run_started?: RunStarted | null;
    records?: WireRecord[];
    run_finished?: RunFinished | null;
    training?: RoomTraining | null;
  }>("room_catch_up", (m) => {
    if (useRoom.getState().role !== "follower" || m.code !== useRoom.getState().code) return;
    if ("training" in m) catchUpTraining(m.training ?? null, []);
    else {
      const started = m.run_started ?? null;
      const records = started ? expandRecords(started.run_id, m.records ?? []) : [];
      useRun.getState().catchUp(started, records, m.run_finished ?? null);
    }
  });
  conn.on<{ code: string; edge: string | null }>("room_select", (m) => {
    if (useRoom.getState().role === "follower" && m.code === useRoom.getState().code) showSelected(m.edge);
  });
  conn.on<{ code: string }>("room_closed", (m) => {
    if (m.code !== useRoom.getState().code) return;
    saveRoom(null);
    endFollowing();
    stopWaiting();
    useRoom.setState({ code: null, role: null, trouble: `Room ${m.code} was closed: the graph on your screen is yours now.` });
  });
}

const TRAIN_EVENTS = ["train_started", "train_progress", "train_snapshot", "train_finished"];

/** Keep the room's training packets that arrive while a join is being answered (they can
 * come before the ack, and are newer than what it holds); the returned function stops and
 * hands them over, in order. */
function holdTrainingPackets(): () => TrainPacket[] {
  const socket = getConnection().socket;
  const held: TrainPacket[] = [];
  const offs = TRAIN_EVENTS.map((event) => {
    const keep = (payload: TrainPacket["payload"]) => held.push({ event, payload });
    socket.on(event, keep);
    return () => socket.off(event, keep);
  });
  return () => {
    for (const off of offs) off();
    return held;
  };
}

/** Show the owner's graph, read-only; an update keeps the view (`keepView`) and what the
 * follower has selected (a student reading a node's fields keeps them open while the owner
 * edits), a join fits it. */
function follow(graph: GraphDocument, keepView = true) {
  // a load is not an edit
  useEditor.getState().load(graph, { dirty: false, keepView, keepSelection: keepView });
  useEditor.getState().setReadOnly(true);
}

function endFollowing() {
  leaveQuiz();
  useEditor.getState().setReadOnly(false);
  usePace.setState({ room: undefined });
  useRun.getState().setFollowing(false);
}

/** The owner's edits and step mode go to the room as they happen (edits debounced). */
function startSync(code: string) {
  const conn = getConnection();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const sendGraph = () =>
    conn.request("room_update", { code, graph: useEditor.getState().document() }).catch(() => {});
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
  void restoreQuiz(code);
  stopSync = () => {
    stopSelected();
    clearTimeout(timer);
    stopGraph();
    stopStep();
    stopLesson();
    stopOpened();
    stopPace();
  };
}

export const useRoom = create<RoomState>()((set, get) => ({
  code: null,
  role: null,
  trouble: null,

  async create() {
    listen();
    const reply = await getConnection().request<{ code?: string; secret?: string; error?: string }>(
      "room_create",
      {},
    );
    if (!reply.code) {
      useEditor.getState().notify(reply.error ?? "could not start a room", "error");
      return;
    }
    set({ code: reply.code, role: "owner", trouble: null });
    saveRoom({ code: reply.code, role: "owner", secret: reply.secret });
    startSync(reply.code);
  },

  async join(code) {
    listen();
    const wanted = code.trim().toUpperCase();
    const release = holdTrainingPackets();
    let early: TrainPacket[] = [];
    const reply = await getConnection().request<{
      code?: string;
      graph?: GraphDocument | null;
      records?: WireRecord[];
      run_started?: RunStarted | null;
      run_finished?: RunFinished | null;
      step?: number | null;
      lesson?: number | null;
      pace?: { steps_per_second: Pace } | null;
      training?: RoomTraining | null;
      selected?: string | null;
      quiz?: QuizView | null;
      error?: string;
    }>("room_join", { code: wanted }).finally(() => {
      early = release();
    });
    if (!reply.code) return reply.error ?? `no room ${wanted}`;
    stopWaiting();
    set({ code: reply.code, role: "follower", trouble: null });
    saveRoom({ code: reply.code, role: "follower" });
    useRun.getState().setFollowing(true);
    if (reply.graph) follow(reply.graph, false);
    else useEditor.getState().setReadOnly(true);
    // the lesson step the teacher shows, and the pace the class watches
    showLesson(reply.lesson ?? 0);
    usePace.setState({ room: reply.pace ? reply.pace.steps_per_second : undefined });
    // what the room has already seen of the owner's last run; if it is still going, its
    // next packets continue it here
    const started = reply.run_started ?? null;
    const records = started ? expandRecords(started.run_id, reply.records ?? []) : [];
    useRun.getState().catchUp(started, records, reply.run_finished ?? null);
    // where the owner is in step mode, the lesson's current record
    if (typeof reply.step === "number" && records.length) {
      useRun.getState().enterStep();
      useRun.getState().setPlaying(false);
      useRun.getState().stepTo(reply.step);
    }
    // the owner's training so far (the chart, the step, the boundary), then what came since
    catchUpTraining(reply.training ?? null, early);
    // the wire the teacher has selected, and the question the teacher asks (its number
    // hidden here until the reveal)
    showSelected(reply.selected ?? null);
    showQuiz(reply.quiz ?? null);
    return null;
  },

  async leave() {
    const { code, role } = get();
    stopWaiting();
    set({ trouble: null });
    if (!code) return;
    stopSync?.();
    stopSync = null;
    saveRoom(null);
    await getConnection().request("room_leave", { code }).catch(() => {});
    if (role === "follower") endFollowing();
    else leaveQuiz();
    set({ code: null, role: null });
  },

  /** Leave the room and keep the graph as one's own, to edit and save. */
  async fork() {
    await get().leave();
    useEditor.getState().markUnsavedCopy();
    useEditor.getState().notify("forked: this copy is yours to edit and save");
  },

  dismissTrouble() {
    set({ trouble: null });
  },
}));

