// Predict, then reveal (store/quiz.ts), on the canvas's top right. The teacher, leading a room
// with a wire selected after a run, asks the class for its gradient, its value or its
// producer's .grad, then watches the answers come in (grouped, the most common wrong one with
// the mistake it suggests), reveals, and can download the answers as CSV. A student sees the
// question, answers (a number or a tensor, as in PyTorch), and after the reveal whether they
// were right, the value, and how the class did.
import { useState } from "react";
import { useShallow } from "zustand/react/shallow";
import { useEditor } from "../../store/editor";
import { nameOf } from "../../store/names";
import { type AnswerGroup, nextRecordQuestion, type QuizTarget, type QuizView, type Spread, useQuiz } from "../../store/quiz";
import { useRoom } from "../../store/room";
import { usePace } from "../../store/pace";
import { useRun } from "../../store/run";
import "./quiz.css";

function shapeWords(shape: number[]) {
  return shape.length === 0 ? "a number" : `a tensor of shape [${shape.join(", ")}]`;
}

/** What the teacher can ask about the selected wire, as the run has it. */
function askable(edgeId: string | null): QuizTarget[] {
  if (!edgeId) return [];
  const edge = useEditor.getState().edges.find((e) => e.id === edgeId);
  if (!edge) return [];
  const a = useRun.getState().annotations;
  const wire = `${nameOf(edge.source)} → ${nameOf(edge.target)}`;
  const out: QuizTarget[] = [];
  if (a.edgeGrads[edge.id]) out.push({ kind: "grad", id: edge.id, label: `the gradient on ${wire}` });
  if (a.leafGrads[edge.source]) out.push({ kind: "leaf_grad", id: edge.source, label: `${nameOf(edge.source)}.grad` });
  if (a.values[edge.source]) out.push({ kind: "value", id: edge.source, label: `the value of ${nameOf(edge.source)}` });
  return out;
}

/** The answers grouped; `secret`: on the projector before the reveal, without which is right. */
function Groups({ spread, secret }: { spread: Spread; secret: boolean }) {
  const most = Math.max(1, ...spread.groups.map((g) => g.count));
  return (
    <ul className="quiz-groups" aria-label="answers grouped">
      {spread.groups.slice(0, 6).map((g: AnswerGroup) => (
        <li key={g.answer} className={secret ? "" : g.right ? "right" : "wrong"} title={secret ? undefined : (g.mistake ?? undefined)}>
          <span className="quiz-bar" style={{ width: `${(100 * g.count) / most}%` }} />
          <code>{g.answer}</code> <b>×{g.count}</b>
          {!secret && <span className="quiz-mark">{g.right ? " right" : " wrong"}</span>}
        </li>
      ))}
      {spread.groups.length > 6 && <li className="muted">and {spread.groups.length - 6} other answers</li>}
    </ul>
  );
}

function TeacherQuiz() {
  const { quiz, spread } = useQuiz(useShallow((s) => ({ quiz: s.quiz, spread: s.spread })));
  const selected = useRun((s) => s.selectedEdge);
  const presenting = usePace((s) => s.presenting);
  useRun((s) => s.annotations); // what can be asked follows the run
  // step mode: the record the next step shows comes first (a quiz at each step of a backward)
  const stepAt = useRun((s) => s.step?.index ?? null);
  const records = useRun((s) => s.records);
  const next = stepAt === null ? null : nextRecordQuestion(records, stepAt);
  const [names, setNames] = useState(false);
  const [kind, setKind] = useState(0);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // a button until the teacher means to ask: a wire selected to explain its chain rule does
  // not put a form on the projector (nor change the band's height and the graph's fit)
  const [asking, setAsking] = useState(false);
  const act = async (f: () => Promise<string | null>) => {
    setBusy(true);
    setProblem(await f());
    setBusy(false);
  };
  if (!quiz) {
    const options = [...(next ? [next] : []), ...askable(selected)];
    if (!options.length) return null;
    const target = options[Math.min(kind, options.length - 1)];
    if (!asking)
      return (
        <aside className="quiz teacher closed" role="region" aria-label="ask the class">
          <button type="button" onClick={() => setAsking(true)}>
            Ask the class…
          </button>
        </aside>
      );
    return (
      <aside className="quiz teacher" role="region" aria-label="ask the class">
        <header>
          <b>Ask the class</b>
        </header>
        <label>
          predict{" "}
          <select aria-label="what to ask" value={Math.min(kind, options.length - 1)} onChange={(e) => setKind(Number(e.target.value))}>
            {options.map((o, i) => (
              <option key={`${i}-${o.kind}-${o.id}`} value={i}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <label className="quiz-names">
          <input type="checkbox" checked={names} onChange={(e) => setNames(e.target.checked)} /> ask for names
        </label>
        <div className="quiz-buttons">
          <button type="button" onClick={() => setAsking(false)}>
            Not now
          </button>
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => act(async () => (await useQuiz.getState().ask(target, names)) ?? (setAsking(false), null))}
          >
            Ask
          </button>
        </div>
        {problem && (
          <p className="field-error" role="alert">
            {problem}
          </p>
        )}
      </aside>
    );
  }
  const s = spread ?? quiz.spread ?? { answered: 0, right: 0, groups: [] };
  const revealed = quiz.status === "revealed";
  // the projector is in front of the class: which answer is right waits for the reveal there
  const secret = presenting && !revealed;
  const download = async () => {
    const text = await useQuiz.getState().csv();
    if (text === null) return;
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
    link.download = `answers-${useRoom.getState().code ?? "room"}.csv`;
    link.click();
    URL.revokeObjectURL(link.href);
  };
  return (
    <aside className="quiz teacher" role="region" aria-label="class answers">
      <header>
        <b>Predict: {quiz.target.label}</b>
      </header>
      {quiz.question && (
        <p className="quiz-question" aria-label="the question">
          {quiz.question}
        </p>
      )}
      <p className="quiz-count" aria-label="answered" data-answered={s.answered} data-right={s.right}>
        {s.answered} answered{!secret && (revealed || s.answered) ? ` · ${s.right} right` : ""}
      </p>
      {s.groups.length > 0 && <Groups spread={s} secret={secret} />}
      {!secret && s.common_wrong && (
        <p className="quiz-mistake" aria-label="most common wrong answer">
          most common wrong: <code>{s.common_wrong.answer}</code> ×{s.common_wrong.count}
          {s.common_wrong.mistake && <> — {s.common_wrong.mistake}</>}
        </p>
      )}
      {revealed && (
        <p className="quiz-truth" aria-label="revealed value">
          the value: <code>{quiz.truth_shown}</code>
        </p>
      )}
      <div className="quiz-buttons">
        {!revealed && (
          <button type="button" className="primary" disabled={busy} onClick={() => act(() => useQuiz.getState().reveal())}>
            Reveal
          </button>
        )}
        <button type="button" onClick={download} disabled={!s.answered}>
          CSV
        </button>
        <button type="button" onClick={() => useQuiz.getState().end()}>
          {revealed ? "Done" : "Cancel"}
        </button>
      </div>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
    </aside>
  );
}

function StudentQuiz({ quiz }: { quiz: QuizView }) {
  const mine = useQuiz((s) => s.mine);
  const [text, setText] = useState("");
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  if (quiz.status === "revealed") {
    const verdict = mine ? quiz.verdicts?.[mine.token] : undefined;
    const spread = quiz.spread;
    return (
      <aside className="quiz student" role="region" aria-label="question">
        <header>
          <b>{quiz.target.label}</b>
        </header>
        <p className={`quiz-verdict ${verdict ? "right" : "wrong"}`} aria-label="your result">
          {verdict === undefined ? "you did not answer" : verdict ? "✓ right" : "✗ not quite"}
        </p>
        <p className="quiz-truth" aria-label="revealed value">
          the value: <code>{quiz.truth_shown}</code>
        </p>
        {mine && (
          <p className="muted">
            you answered <code>{mine.shown}</code>
          </p>
        )}
        {spread && (
          <p className="muted" aria-label="class result">
            the class: {spread.right} of {spread.answered} right
          </p>
        )}
      </aside>
    );
  }
  const send = async (e: React.FormEvent) => {
    e.preventDefault();
    setProblem(await useQuiz.getState().answer(text, quiz.names ? name : undefined));
  };
  return (
    <aside className="quiz student" role="region" aria-label="question">
      <header>
        <b>Predict {quiz.target.label}</b>
      </header>
      {quiz.question && (
        <p className="quiz-question" aria-label="the question">
          {quiz.question}
        </p>
      )}
      <p className="muted">hidden on your canvas until your teacher reveals it: {shapeWords(quiz.shape)}, as in PyTorch</p>
      <form onSubmit={send}>
        {quiz.names && <input aria-label="your name" placeholder="your name" value={name} onChange={(e) => setName(e.target.value)} />}
        <input
          aria-label="your answer"
          className="quiz-answer"
          placeholder={quiz.shape.length ? "[0.5, -1.0]" : "0.5"}
          value={text}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" className="primary" disabled={!text.trim()}>
          {mine ? "Change" : "Answer"}
        </button>
      </form>
      {mine && !problem && (
        <p className="quiz-sent" role="status" aria-label="answer sent">
          sent: <code>{mine.shown}</code> (you can change it until the reveal)
        </p>
      )}
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
    </aside>
  );
}

export default function QuizPanel() {
  const role = useRoom((s) => s.role);
  const quiz = useQuiz((s) => s.quiz);
  if (role === "owner") return <TeacherQuiz />;
  if (role === "follower" && quiz) return <StudentQuiz quiz={quiz} />;
  return null;
}
