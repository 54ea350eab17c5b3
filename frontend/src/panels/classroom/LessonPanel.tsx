// A template's lesson beside the canvas: short steps, each able to select nodes and start a
// run (forward, backward or training) with the options the step names.
import { useShallow } from "zustand/react/shallow";
import type { LessonStep } from "../../api/types";
import { useEditor } from "../../store/editor";
import { lessonAt, useLesson } from "../../store/lesson";
import { useRun } from "../../store/run";
import { useTraining } from "../../store/training";
import { trainingSettings } from "../training/TrainingPanel";
import "./lesson.css";

export async function playStep(step: LessonStep) {
  const ed = useEditor.getState();
  ed.select(step.select.filter((id) => ed.nodes.some((n) => n.id === id)));
  const run = useRun.getState();
  // a step that runs, runs with its own options (and none it does not name)
  if (step.run) run.setOptions({ ...(step.options ?? {}) });
  if (step.run === "forward" || step.run === "backward") await run.start(step.run);
  else if (step.run === "train") await useTraining.getState().start(trainingSettings());
}

export default function LessonPanel() {
  const lesson = useEditor((s) => s.meta.lesson);
  const opened = useEditor((s) => s.opened);
  const { index, hidden } = useLesson(useShallow((s) => lessonAt(s, opened)));
  // a student follows the teacher's step (store/reactions.ts) and runs nothing of its own
  const following = useRun((s) => s.following);
  if (!lesson?.length || hidden) return null;
  const step = lesson[Math.min(index, lesson.length - 1)];
  const go = (i: number) => {
    useLesson.getState().go(i);
    playStep(lesson[i]);
  };
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
      {following ? (
        <p className="muted lesson-following">your teacher leads the lesson</p>
      ) : (
      <div className="lesson-buttons">
        <button type="button" disabled={index === 0} onClick={() => go(index - 1)}>
          ← back
        </button>
        {step.run && (
          <button type="button" onClick={() => playStep(step)}>
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
