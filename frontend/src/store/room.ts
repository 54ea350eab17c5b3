// Classroom rooms (docs/training.md "Socket.IO: rooms"): a teacher starts a room and gets a
// code; students who join follow the teacher's graph, runs, trainings and step mode live, and
// can fork to an editable copy. Only the owner drives.
// The room is remembered for the tab (sessionStorage: the code, the role and the owner's
// secret), so a reload or a reconnect (to this server process or another) returns the owner to
// its room with `room_resume` and a follower with `room_join`, by themselves.
// This store is the room itself: which one, this page's part in it, its trouble, and what it
// showed a joiner. What a room means for the graph, the run, the training, the lesson, the
// pace and the quiz (and what an owner's page sends the room) is wired in store/reactions.ts.
import { create } from "zustand";
import type { GraphDocument, RoomTraining, RunFinished, WireRecord } from "../api/types";
import { getConnection } from "./connection";
import { useEditor } from "./editor";
import type { Pace } from "./pace";
import type { QuizView } from "./quiz";
import type { RunStarted } from "./run";
import type { TrainPacket } from "./training";

/** What a room shows a page that joins it (the join ack), and the room's training packets that
 * overtook the ack (`early`): store/reactions.ts hands each part to its store. */
export interface RoomWelcome {
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
  early: TrainPacket[];
}

export interface RoomState {
  code: string | null;
  role: "owner" | "follower" | null;
  /** What is wrong with the room right now, said plainly in a banner on the page (the
   * server is gone, the room is not open yet after a restart, it could not be reopened). */
  trouble: string | null;
  /** How many times this page has entered a room (started, joined, resumed after a reload or a
   * restart): each entry of an owner's sends the room everything anew (store/reactions.ts). */
  entered: number;
  /** A follower's welcome: what the room showed as this page joined it (null: none). */
  welcome: RoomWelcome | null;
  create(): Promise<void>;
  join(code: string): Promise<string | null>;
  leave(): Promise<void>;
  fork(): Promise<void>;
  dismissTrouble(): void;
  /** At start, once the page's own graph is there: go back into the tab's room if it had one
   * (a `?room=` link, or this tab's room after a reload). */
  init(): void;
  /** The connection is back: back into the tab's room (after a reconnect or a server restart). */
  reconnected(): void;
  /** The connection is gone: the banner says the room carries on. */
  disconnected(): void;
  /** The room was closed by its owner. */
  closed(code: string): void;
}

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

// the room's training packets, held while a join is being answered
const TRAIN_EVENTS = ["train_started", "train_progress", "train_snapshot", "train_finished"];

/** Keep the room's training packets that arrive while a join is being answered (they can
 * come before the ack, and are newer than what it holds); the returned function stops and
 * hands them over, in order. */
function holdTrainingPackets(): () => TrainPacket[] {
  const conn = getConnection();
  const held: TrainPacket[] = [];
  const offs = TRAIN_EVENTS.map((event) =>
    conn.on<TrainPacket["payload"]>(event, (payload) => held.push({ event, payload })),
  );
  return () => {
    for (const off of offs) off();
    return held;
  };
}

export const useRoom = create<RoomState>()((set, get) => {
  // this store's own: whether the page is ready to go back into its room (init), and a
  // follower's wait for a room that is not there (yet)
  let ready = false;
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
        set({ code: reply.code, role: "owner", trouble: null, entered: get().entered + 1 });
        if (reply.restored)
          useEditor.getState().notify(`room ${reply.code} is open again: your students rejoin it by themselves`);
        return;
      }
      saveRoom(null);
      set({
        code: null,
        role: null,
        trouble: `Room ${saved.code} could not be reopened (${reply.error}). Start a new room from Classroom and share its code.`,
      });
    } else if (saved.role === "follower") {
      const problem = await get().join(saved.code).catch((err: Error) => err.message);
      if (!problem) return;
      // not there (yet): after a restart the room is back once the owner's page reconnects
      waitingSince ??= Date.now();
      if (Date.now() - waitingSince < REJOIN_FOR_MS) {
        set({
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
      set({
        code: null,
        role: null,
        welcome: null,
        trouble: `Room ${saved.code} did not come back: the graph on your screen is yours now.`,
      });
    }
  }

  return {
    code: null,
    role: null,
    trouble: null,
    entered: 0,
    welcome: null,

    async create() {
      ready = true;
      const reply = await getConnection().request<{ code?: string; secret?: string; error?: string }>(
        "room_create",
        {},
      );
      if (!reply.code) {
        useEditor.getState().notify(reply.error ?? "could not start a room", "error");
        return;
      }
      saveRoom({ code: reply.code, role: "owner", secret: reply.secret });
      set({ code: reply.code, role: "owner", trouble: null, entered: get().entered + 1 });
    },

    async join(code) {
      ready = true;
      const wanted = code.trim().toUpperCase();
      const release = holdTrainingPackets();
      let early: TrainPacket[] = [];
      const reply = await getConnection()
        .request<Omit<RoomWelcome, "early"> & { code?: string; error?: string }>("room_join", { code: wanted })
        .finally(() => {
          early = release();
        });
      if (!reply.code) return reply.error ?? `no room ${wanted}`;
      stopWaiting();
      saveRoom({ code: reply.code, role: "follower" });
      const { code: joined, error: _, ...shown } = reply;
      set({ code: joined, role: "follower", trouble: null, entered: get().entered + 1, welcome: { ...shown, early } });
      return null;
    },

    async leave() {
      const { code } = get();
      stopWaiting();
      set({ trouble: null });
      if (!code) return;
      saveRoom(null);
      // out of the room at once: nothing more is sent to it, nothing it sends is shown
      set({ code: null, role: null, welcome: null });
      await getConnection().request("room_leave", { code }).catch(() => {});
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

    init() {
      const linked = roomFromLink();
      // a room link makes this tab a follower of that room, unless it leads it already
      if (linked && /^[A-Z2-9]{6}$/.test(linked)) {
        if (savedRoom()?.code !== linked) saveRoom({ code: linked, role: "follower" });
      } else if (linked !== null)
        set({ trouble: `The link's room code “${linked}” is not a room code: six letters and digits, like 2TB2ZS.` });
      ready = true;
      if (getConnection().socket.connected) void rejoin();
    },

    reconnected() {
      if (ready) void rejoin();
    },

    disconnected() {
      const { code } = get();
      if (code) set({ trouble: `Lost the server: room ${code} carries on when it is back (this page reconnects by itself).` });
    },

    closed(code) {
      if (code !== get().code) return;
      saveRoom(null);
      stopWaiting();
      set({ code: null, role: null, welcome: null, trouble: `Room ${code} was closed: the graph on your screen is yours now.` });
    },
  };
});
