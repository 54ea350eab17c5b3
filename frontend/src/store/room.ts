// Classroom rooms (docs/training.md "Socket.IO: rooms"): a teacher starts a room and gets a
// code; students who join follow the teacher's graph, runs, trainings and step mode live, and
// can fork to an editable copy. Only the owner drives.
// The room is remembered for the tab (sessionStorage: the code, the role and the owner's
// secret), so a reload or a reconnect (to this server process or another) returns the owner to
// its room with `room_resume` and a follower with `room_join`, by themselves.
import { create } from "zustand";
import { expandRecords } from "../api/summaryRows";
import type { GraphDocument, RunFinished, RunMode, WireRecord } from "../api/types";
import { applyRecords, emptyAnnotations } from "./annotations";
import { useEditor } from "./editor";
import { getConnection, useRun } from "./run";

export interface RoomState {
  code: string | null;
  role: "owner" | "follower" | null;
  create(): Promise<void>;
  join(code: string): Promise<string | null>;
  leave(): Promise<void>;
  fork(): Promise<void>;
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

/** Back into the tab's room after a reload or a reconnect. */
async function rejoin() {
  const saved = savedRoom();
  if (!saved) return;
  const conn = getConnection();
  if (saved.role === "owner" && saved.secret) {
    type Reply = { code?: string; error?: string };
    const reply: Reply = await conn
      .request<Reply>("room_resume", { code: saved.code, secret: saved.secret })
      .catch((err: Error) => ({ error: err.message }));
    if (reply.code) {
      stopSync?.();
      useRoom.setState({ code: reply.code, role: "owner" });
      startSync(reply.code);
      return;
    }
    saveRoom(null);
    useRoom.setState({ code: null, role: null });
    useEditor.getState().notify(`room ${saved.code} could not be resumed: ${reply.error}`, "error");
  } else if (saved.role === "follower") {
    const problem = await useRoom.getState().join(saved.code).catch((err: Error) => err.message);
    if (problem) {
      saveRoom(null);
      endFollowing();
      useRoom.setState({ code: null, role: null });
      useEditor.getState().notify(`room ${saved.code}: ${problem}`, "error");
    }
  }
}

/** At start: listen for room events, and go back into the tab's room if it had one. */
export function initRooms() {
  listen();
  if (getConnection().socket.connected) void rejoin();
}

function listen() {
  if (listening) return;
  listening = true;
  const conn = getConnection();
  conn.on("connect", () => void rejoin());
  conn.on<{ code: string; graph: GraphDocument }>("room_graph", (m) => {
    if (useRoom.getState().role === "follower" && m.code === useRoom.getState().code) follow(m.graph);
  });
  conn.on<{ code: string; index: number }>("room_step", (m) => {
    if (useRoom.getState().role !== "follower") return;
    const run = useRun.getState();
    if (!run.step) run.enterStep();
    useRun.getState().setPlaying(false);
    useRun.getState().stepTo(m.index);
  });
  conn.on<{ code: string }>("room_closed", (m) => {
    if (m.code !== useRoom.getState().code) return;
    saveRoom(null);
    endFollowing();
    useRoom.setState({ code: null, role: null });
    useEditor.getState().notify(`room ${m.code} was closed: the graph on your screen is yours now`);
  });
}

/** Show the owner's graph, read-only; an update keeps the view (`keepView`) and what the
 * follower has selected (a student reading a node's fields keeps them open while the owner
 * edits), a join fits it. */
function follow(graph: GraphDocument, keepView = true) {
  // a load is not an edit
  useEditor.getState().load(graph, { dirty: false, keepView, keepSelection: keepView });
  useEditor.setState({ readOnly: true });
}

function endFollowing() {
  useEditor.setState({ readOnly: false });
  useRun.setState({ following: false });
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
  const stopStep = useRun.subscribe((s, prev) => {
    if (s.step && s.step.index !== prev.step?.index)
      conn.request("room_step", { code, index: s.step.index }).catch(() => {});
  });
  stopSync = () => {
    clearTimeout(timer);
    stopGraph();
    stopStep();
  };
}

export const useRoom = create<RoomState>()((set, get) => ({
  code: null,
  role: null,

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
    set({ code: reply.code, role: "owner" });
    saveRoom({ code: reply.code, role: "owner", secret: reply.secret });
    startSync(reply.code);
  },

  async join(code) {
    listen();
    const wanted = code.trim().toUpperCase();
    const reply = await getConnection().request<{
      code?: string;
      graph?: GraphDocument | null;
      records?: WireRecord[];
      run_started?: { run_id: string; mode: RunMode; target: string | null } | null;
      run_finished?: RunFinished | null;
      error?: string;
    }>("room_join", { code: wanted });
    if (!reply.code) return reply.error ?? `no room ${wanted}`;
    set({ code: reply.code, role: "follower" });
    saveRoom({ code: reply.code, role: "follower" });
    useRun.setState({ following: true });
    if (reply.graph) follow(reply.graph, false);
    else useEditor.setState({ readOnly: true });
    // what the room has already seen of the owner's last run; if it is still going, its
    // next packets continue it here
    const started = reply.run_started;
    const records = started ? expandRecords(started.run_id, reply.records ?? []) : [];
    useRun.setState({
      runId: started?.run_id ?? null,
      mode: started?.mode ?? null,
      target: started?.target ?? null,
      running: Boolean(started && !reply.run_finished),
      finished: reply.run_finished ?? null,
      records,
      annotations: applyRecords(emptyAnnotations(), records),
      step: null,
      focus: {},
    });
    return null;
  },

  async leave() {
    const { code, role } = get();
    if (!code) return;
    stopSync?.();
    stopSync = null;
    saveRoom(null);
    await getConnection().request("room_leave", { code }).catch(() => {});
    if (role === "follower") endFollowing();
    set({ code: null, role: null });
  },

  /** Leave the room and keep the graph as one's own, to edit and save. */
  async fork() {
    await get().leave();
    useEditor.setState({ dirty: true, graphId: null, revision: null });
    useEditor.getState().notify("forked: this copy is yours to edit and save");
  },
}));
