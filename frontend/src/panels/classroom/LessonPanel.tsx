// A template's lesson beside the canvas: short steps, each able to select nodes and start a
// run (forward, backward or training) with the options the step names.
import { useShallow } from "zustand/react/shallow";
import { useState } from "react";
import type { LessonStep } from "../../api/types";
import { useEditor } from "../../store/editor";
import { lessonAt, predictTarget, useLesson } from "../../store/lesson";
import { useQuiz, wholeRun } from "../../store/quiz";
import { useRoom } from "../../store/room";
import { type RunState, useRun } from "../../store/run";
import { useTraining } from "../../store/training";
import { trainingSettings } from "../training/TrainingPanel";
import "./lesson.css";

/** Play a lesson step: select its nodes and start its run. `ask`: the step was just reached,
 * so on the page that leads a room a step that asks (docs/graph-format.md, "Lesson steps that
 * ask") asks the room once its run is on the screen; resolves with why it could not, or null. */
export async function playStep(step: LessonStep, ask = false): Promise<string | null> {
  const ed = useEditor.getState();
  ed.select(step.select.filter((id) => ed.nodes.some((n) => n.id === id)));
  const run = useRun.getState();
  // a step that runs, runs with its own options (and none it does not name)
  if (step.run) run.setOptions({ ...(step.options ?? {}) });
  const room = useRoom.getState();
  const asking = ask && step.predict && room.code && room.role === "owner";
  if (step.run === "forward" || step.run === "backward") {
    const lesson = useLesson.getState();
    await run.start(step.run);
    if (!asking) return null;
    const ok = await runShown();
    // (the teacher may have moved on meanwhile: the question belongs to its step)
    const still = useLesson.getState();
    if (still.index !== lesson.index || still.opened !== lesson.opened) return null;
    if (!ok) {
      useQuiz.getState().notAsking();
      return "the step's run did not finish, so its question was not asked";
    }
  } else if (step.run === "train") await useTraining.getState().start(trainingSettings());
  if (!asking || !step.predict) return null;
  const now = useEditor.getState();
  const target = predictTarget(step.predict, now.nodes, now.edges, wholeRun().leafGrads);
  const problem = typeof target === "string" ? target : await useQuiz.getState().ask(target, false, step.predict.prompt ?? "");
  if (problem) useQuiz.getState().notAsking();
  return problem;
}

/** Resolves once the run just started is on the screen: true when it finished ok. */
function runShown(): Promise<boolean> {
  return new Promise((resolve) => {
    const check = (s: RunState) => {
      if (s.running) return false;
      stop();
      resolve(s.finished?.status === "ok");
      return true;
    };
    const stop = useRun.subscribe(check);
    check(useRun.getState());
  });
}

export default function LessonPanel() {
  const lesson = useEditor((s) => s.meta.lesson);
  const opened = useEditor((s) => s.opened);
  const { index, hidden } = useLesson(useShallow((s) => lessonAt(s, opened)));
  // a student follows the teacher's step (store/reactions.ts) and runs nothing of its own
  const following = useRun((s) => s.following);
  const leading = useRoom((s) => s.role === "owner");
  const quizOpen = useQuiz((s) => s.quiz?.status === "open");
  // why this step's question could not be asked, with the step it is about
  const [problem, setProblem] = useState<{ opened: number; index: number; text: string } | null>(null);
  if (!lesson?.length || hidden) return null;
  const step = lesson[Math.min(index, lesson.length - 1)];
  const play = (i: number, ask: boolean) =>
    playStep(lesson[i], ask).then((text) => setProblem(text ? { opened, index: i, text } : null));
  const go = (i: number) => {
    useLesson.getState().go(i);
    setProblem(null);
    play(i, true);
  };
  const shownProblem = problem && problem.opened === opened && problem.index === index ? problem.text : null;
  return (
    <aside className="lesson" role="region" aria-label="lesson">
      <header>
        <b>
          Lesson · step {index + 1} of {lesson.length}
        </b>
        <button type="button" className="small" aria-label="close lesson" onClick={() => useLesson.getState().hide()}>
          ×
        </button>
      </header>
      <p className="lesson-text">{step.text}</p>
      {step.predict && leading && (
        <p className={shownProblem ? "field-error lesson-asks" : "muted lesson-asks"} role={shownProblem ? "alert" : undefined}>
          {shownProblem ?? "this step asks the class once its run is shown"}
        </p>
      )}
      {following ? (
        <p className="muted lesson-following">your teacher leads the lesson</p>
      ) : (
      <div className="lesson-buttons">
        <button type="button" disabled={index === 0} onClick={() => go(index - 1)}>
          ← back
        </button>
        {step.run && (
          // again: the step's question is asked again only when none is open
          <button type="button" onClick={() => play(index, !quizOpen)}>
            {step.run === "train" ? "train again" : `run ${step.run} again`}
          </button>
        )}
        <button type="button" className="primary" disabled={index >= lesson.length - 1} onClick={() => go(index + 1)}>
          next →
        </button>
      </div>
      )}
    </aside>
  );
}
