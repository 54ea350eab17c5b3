// Predict, then reveal (issue 35; backend/server/room_quiz.py): in a room, the teacher points
// at a wire and asks for its gradient, the value on it, or its producer's .grad; each
// student's page hides that number (quizMask.ts) and takes an answer; the teacher sees the
// spread of answers as they come; the reveal shows the value to everyone, each student whether
// they were right, and the chain rule on the wire.
import { create } from "zustand";
import type { Nested, Summary, TraceRecord } from "../api/types";
import { type Annotations, applyRecords, describeRecord, emptyAnnotations } from "./annotations";
import { useEditor } from "./editor";
import { currentPredict, predictTarget } from "./lesson";
import { nameOf } from "./names";
import { type Hidden, hiddenKeys, lessonKeys, mask, type QuizTarget, unmask } from "./quizMask";
import { getConnection } from "./connection";
import { useRun } from "./run";

export type { QuizTarget } from "./quizMask";

export interface AnswerGroup {
  answer: string;
  count: number;
  right: boolean;
  mistake: string | null;
}

export interface Spread {
  answered: number;
  right: number;
  groups: AnswerGroup[];
  common_wrong?: AnswerGroup | null;
}

/** A question as students see it; after the reveal, with the value and the class's spread. */
export interface QuizView {
  quiz_id: string;
  target: QuizTarget;
  question: string;
  names: boolean;
  status: "open" | "revealed";
  shape: number[];
  truth?: Nested;
  truth_shown?: string;
  verdicts?: Record<string, boolean>;
  spread?: Spread;
}

interface MyAnswer {
  quiz_id: string;
  token: string;
  shown: string;
}

export interface QuizState {
  quiz: QuizView | null;
  spread: Spread | null; // the owner's: every answer so far
  mine: MyAnswer | null; // a student's own answer to the question shown
  hiddenEdges: string[]; // the wires whose gradient this page hides now (the chain rule says so)
  /** The room this page is in and its part in it (store/reactions.ts keeps them as the room
   * store's), and whether it presents: the projector hides the number, the teacher's own
   * screen not. */
  room: { code: string | null; role: "owner" | "follower" | null };
  presenting: boolean;
  setRoom(code: string | null, role: "owner" | "follower" | null): void;
  setPresenting(on: boolean): void;
  /** A question (or none) as the room says it: on joining, as the owner asks, at the reveal. */
  show(quiz: QuizView | null): void;
  /** After a reload or a restart: the owner's page asks the room for its question and spread. */
  restore(code: string): Promise<void>;
  /** Leaving a room: no question, nothing hidden. */
  leave(): void;
  /** The lesson shows another step (store/reactions.ts): a step that asks the room has its
   * number hidden from now on, where a question would hide it, until its question comes (the
   * owner's page asks once the step's run is shown), another step is shown, or 30 s pass. */
  lessonStepShown(): void;
  /** The owner's page will not ask the lesson step's question after all (its run failed). */
  notAsking(): void;
  /** The room's spread of answers so far (the owner's page). */
  answers(m: Spread & { code: string; quiz_id: string }): void;
  /** The run's annotations were rebuilt (records, step mode): hide the number again. */
  rehide(): void;
  /** `question`: the question in words (a lesson step's prompt). */
  ask(target: QuizTarget, names: boolean, question?: string): Promise<string | null>;
  answer(text: string, name?: string): Promise<string | null>;
  reveal(): Promise<string | null>;
  end(): Promise<void>;
  csv(): Promise<string | null>;
}

const MINE = "wiregrad.quiz-answer";
function keepMine(mine: MyAnswer | null) {
  try {
    if (mine) sessionStorage.setItem(MINE, JSON.stringify(mine));
    else sessionStorage.removeItem(MINE);
  } catch {
    /* storage disabled: a reload forgets the answer (the server still has it) */
  }
}
function savedMine(quizId: string): MyAnswer | null {
  try {
    const mine = JSON.parse(sessionStorage.getItem(MINE) ?? "null");
    return mine?.quiz_id === quizId ? mine : null;
  } catch {
    return null;
  }
}

/** What the owner's page knows of a wire's numbers: the true value of what it asks about and
 * the wrong values typical mistakes give. Null when the run has no such number (yet). */
export function questionAbout(
  target: QuizTarget,
  a: Annotations = useRun.getState().annotations,
): { truth: Nested; mistakes: { why: string; value: Nested }[] } | string {
  const edges = useEditor.getState().edges;
  const full = (s: Summary | undefined) => (s && s.preview !== undefined && s.preview !== null ? s.preview : null);
  const mistakes: { why: string; value: Nested }[] = [];
  let truth: Nested | null = null;
  const num = (s: Summary | undefined) => (s && s.numel === 1 && typeof full(s) === "number" ? (full(s) as number) : null);
  /** A one-number gradient `g` on `edge` flows on through the edge's consumer; where the
   * consumer's gradient is the sum of several paths, what `g` would be with one path only
   * (the local derivative, g / the consumer's total, times that path's gradient). */
  const onePath = (edge: { target: string }, g: number | null) => {
    const total = num(a.nodeGrads[edge.target]);
    const out = edges.filter((e) => e.source === edge.target);
    if (g === null || !total || out.length < 2) return;
    for (const e of out) {
      const path = num(a.edgeGrads[e.id]);
      if (path !== null)
        mistakes.push({ why: `only the path through ${nameOf(e.target)}: forgot to add the other paths`, value: (g / total) * path });
    }
  };
  if (target.kind === "grad") {
    const edge = edges.find((e) => e.id === target.id);
    truth = full(a.edgeGrads[target.id]);
    if (edge) onePath(edge, num(a.edgeGrads[target.id]));
    if (edge) {
      const value = full(a.values[edge.source]);
      if (value !== null) mistakes.push({ why: "the value on the wire, not its gradient", value });
      const out = edges.filter((e) => e.source === edge.source);
      const total = full(a.nodeGrads[edge.source]);
      if (out.length > 1 && total !== null)
        mistakes.push({ why: `added the other paths: this wire carries only what ${nameOf(edge.target)} sends back`, value: total });
    }
  } else if (target.kind === "leaf_grad" || target.kind === "node_grad") {
    const node = target.id.split(".")[0];
    truth = full(target.kind === "leaf_grad" ? a.leafGrads[target.id] : a.nodeGrads[target.id]);
    const out = edges.filter((e) => e.source === node);
    if (out.length === 1) onePath(out[0], num(target.kind === "leaf_grad" ? a.leafGrads[target.id] : a.nodeGrads[node]));
    if (out.length > 1)
      for (const e of out) {
        const g = full(a.edgeGrads[e.id]);
        if (g !== null) mistakes.push({ why: `only one path: forgot to add the gradient through ${nameOf(e.target)}`, value: g });
      }
    const value = full(a.values[node]);
    if (value !== null) mistakes.push({ why: "the value, not the gradient", value });
  } else {
    truth = full(a.values[target.id]);
  }
  if (truth === null)
    return a.edgeGrads[target.id] || a.values[target.id] || a.leafGrads[target.id] || a.nodeGrads[target.id]
      ? "that tensor is too large to ask about (more than 1,024 numbers)"
      : "run Backward first: the run has no such number yet";
  return { truth, mistakes: mistakes.slice(0, 8) };
}

/** In step mode, what the next step shows, as a question: the record at the step position
 * when it is one number students can predict (an edge's gradient, a leaf's .grad, a node's
 * value), with the words step mode's caption uses. Null otherwise. */
export function nextRecordQuestion(records: TraceRecord[], index: number): QuizTarget | null {
  const r = records[index];
  if (!r) return null;
  // (named by its position: after the teacher steps on it is no longer "the next")
  const label = `step ${index + 1}: ${describeRecord(r, nameOf)}`;
  if (r.kind === "edge_grad") return { kind: "grad", id: r.edge, label };
  if (r.kind === "leaf_grad") return { kind: "leaf_grad", id: r.param ? `${r.node}.${r.param}` : r.node, label };
  if (r.kind === "value") return { kind: "value", id: r.node, label };
  if (r.kind === "node_grad") return { kind: "node_grad", id: r.node, label };
  return null;
}

/** The whole run's annotations (step mode shows only those up to its position; a question
 * about the next record takes its value from here). */
export function wholeRun(): Annotations {
  return applyRecords(emptyAnnotations(), useRun.getState().records);
}

/** Whether two targets are one number (a leaf's .grad and its total gradient are one). */
function sameNumber(a: QuizTarget, b: QuizTarget) {
  const grad = (t: QuizTarget) => t.kind === "leaf_grad" || t.kind === "node_grad";
  return a.id === b.id && (a.kind === b.kind || (grad(a) && grad(b)));
}

/** The question the lesson step shown now asks, as a target (null: none). */
function lessonTarget(): QuizTarget | null {
  const p = currentPredict();
  if (!p) return null;
  const ed = useEditor.getState();
  const t = predictTarget(p, ed.nodes, ed.edges);
  return typeof t === "string" ? null : t;
}

const PENDING_MS = 30_000;

export const useQuiz = create<QuizState>()((set, get) => {
  // -- hiding the number on a student's page: what is hidden (`keys`, read from the
  // annotations as they grow: a lesson's question hides every gradient), the numbers taken out
  // of the run's annotations meanwhile (put back at the reveal), and a lesson step's question
  // that its owner has not asked yet; this store's own
  let taken: Hidden = {};
  let hiding: { target: QuizTarget; keys: (a: Annotations) => ReturnType<typeof hiddenKeys> } | null = null;
  let pending: QuizTarget | null = null;
  let pendingTimer: ReturnType<typeof setTimeout> | undefined;

  function hideNow() {
    if (!hiding) return;
    const a = useRun.getState().annotations;
    const out = mask(a, hiding.keys(a));
    if (!out) return;
    for (const [table, entries] of Object.entries(out.taken) as [keyof Hidden, Record<string, Summary>][])
      taken[table] = { ...taken[table], ...entries };
    useRun.getState().replaceAnnotations(out.masked);
  }

  function putBack() {
    if (!hiding) return;
    hiding = null;
    set({ hiddenEdges: [] });
    useRun.getState().replaceAnnotations(unmask(useRun.getState().annotations, taken));
    taken = {};
  }

  /** Hide what the open question asks about (or the lesson step's question to come), on a
   * student's page and on the teacher's while presenting (the projector is in front of the
   * class); show it again after. */
  function refresh() {
    const { quiz, room, presenting } = get();
    const shows = room.role === "follower" || (room.role === "owner" && presenting);
    const target = !shows ? null : quiz?.status === "open" ? quiz.target : pending;
    if (hiding && target && sameNumber(hiding.target, target)) return hideNow();
    putBack();
    if (!target) return;
    const edges = useEditor.getState().edges;
    const lesson = lessonTarget();
    const fromLesson = lesson !== null && sameNumber(lesson, target);
    hiding = {
      target,
      keys: fromLesson ? (a) => lessonKeys(target, edges, a) : () => hiddenKeys(target, edges),
    };
    set({ hiddenEdges: hiding.keys(useRun.getState().annotations).edgeGrads ?? [] });
    hideNow();
  }

  function setPending(target: QuizTarget | null) {
    clearTimeout(pendingTimer);
    pendingTimer = undefined;
    pending = target;
    if (target)
      pendingTimer = setTimeout(() => {
        pending = null;
        pendingTimer = undefined;
        refresh();
      }, PENDING_MS);
  }

  const roomCode = () => get().room.code;

  return {
    quiz: null,
    spread: null,
    mine: null,
    hiddenEdges: [],
    room: { code: null, role: null },
    presenting: false,

    setRoom(code, role) {
      set({ room: { code, role } });
    },

    setPresenting(on) {
      if (on === get().presenting) return;
      set({ presenting: on });
      refresh();
    },

    show(quiz) {
      const before = get();
      const mine = quiz && (before.mine?.quiz_id === quiz.quiz_id ? before.mine : savedMine(quiz.quiz_id));
      set({
        quiz,
        mine: mine ?? null,
        spread: quiz && before.spread && before.quiz?.quiz_id === quiz.quiz_id ? before.spread : (quiz?.spread ?? null),
      });
      // what the room says of its question settles a lesson step's question to come (a
      // joiner's page, which reaches the step with the room's question, asked or over)
      setPending(null);
      refresh();
      // the reveal explains the wire: students see its chain rule with the numbers
      if (quiz?.status === "revealed" && quiz.target.kind === "grad" && get().room.role === "follower")
        useRun.getState().selectEdge(quiz.target.id);
    },

    async restore(code) {
      const reply = await getConnection()
        .request<{ quiz?: QuizView | null; spread?: Spread; error?: string }>("room_quiz_spread", { code })
        .catch(() => ({ quiz: null }) as { quiz: null });
      if (reply.quiz) {
        set({ quiz: reply.quiz, spread: reply.spread ?? null });
        refresh();
      }
    },

    leave() {
      set({ quiz: null, spread: null, mine: null });
      setPending(null);
      refresh();
    },

    lessonStepShown() {
      setPending(lessonTarget());
      refresh();
    },

    notAsking() {
      setPending(null);
      refresh();
    },

    answers(m) {
      if (m.code === roomCode() && m.quiz_id === get().quiz?.quiz_id) set({ spread: m });
    },

    rehide() {
      hideNow();
    },

    async ask(target, names, question = "") {
      const code = roomCode();
      if (!code || get().room.role !== "owner") return "lead a room to ask your students";
      // in step mode the number may be past the step position, and a number hidden on the
      // projector is out of the annotations: the whole run has it
      const about = questionAbout(target, useRun.getState().step || hiding ? wholeRun() : undefined);
      if (typeof about === "string") return about;
      const reply = await getConnection()
        .request<{ ok?: boolean; quiz_id?: string; error?: string }>("room_ask", { code, target, question, names, ...about })
        .catch((err: Error) => ({ error: err.message }) as { error: string; quiz_id?: undefined });
      if (!reply.quiz_id) return reply.error ?? "the question could not be asked";
      const shape = (function shapeOf(x: Nested): number[] {
        return Array.isArray(x) ? [x.length, ...(x.length ? shapeOf(x[0]) : [])] : [];
      })(about.truth);
      set({
        quiz: { quiz_id: reply.quiz_id, target, question, names, status: "open", shape },
        spread: { answered: 0, right: 0, groups: [], common_wrong: null },
      });
      setPending(null);
      refresh();
      return null;
    },

    async answer(text, name) {
      const { quiz, mine } = get();
      const code = roomCode();
      if (!quiz || !code) return "there is no question open";
      const reply = await getConnection()
        .request<{ ok?: boolean; token?: string; answer?: string; error?: string }>("room_answer", {
          code,
          quiz_id: quiz.quiz_id,
          answer: text,
          ...(name ? { name } : {}),
          ...(mine ? { token: mine.token } : {}),
        })
        .catch((err: Error) => ({ error: err.message }) as { error: string; token?: undefined });
      if (!reply.token) return reply.error ?? "the answer was not taken";
      const kept = { quiz_id: quiz.quiz_id, token: reply.token, shown: reply.answer ?? text };
      keepMine(kept);
      set({ mine: kept });
      return null;
    },

    async reveal() {
      const { quiz } = get();
      const code = roomCode();
      if (!quiz || !code) return "there is no question open";
      const reply = await getConnection()
        .request<{ ok?: boolean; quiz?: QuizView; error?: string }>("room_reveal", { code, quiz_id: quiz.quiz_id })
        .catch((err: Error) => ({ error: err.message }) as { error: string; quiz?: undefined });
      if (!reply.quiz) return reply.error ?? "the answer could not be revealed";
      // (the room's broadcast goes to the students; the owner's page has the view from here)
      set({ quiz: reply.quiz });
      refresh();
      return null;
    },

    async end() {
      const code = roomCode();
      if (code) await getConnection().request("room_quiz_end", { code }).catch(() => {});
      set({ quiz: null, spread: null });
      refresh();
    },

    async csv() {
      const code = roomCode();
      if (!code) return null;
      const reply = await getConnection()
        .request<{ csv?: string; error?: string }>("room_quiz_csv", { code })
        .catch(() => ({}) as { csv?: string });
      return reply.csv ?? null;
    },
  };
});
