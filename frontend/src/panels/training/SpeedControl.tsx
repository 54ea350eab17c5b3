// The training's speed (steps per second): "max", or a pace a class can watch; classroom pace
// by default while presenting or leading a room (store/pace.ts). A change during a training
// applies to it at once: the server holds the pace between steps.
import { PACES, paceFor, paceLabel, paceReason, usePace, type Pace } from "../../store/pace";
import { useRoom } from "../../store/room";
import { useRun } from "../../store/run";
import { useTraining } from "../../store/training";

const encode = (p: Pace) => (p === null ? "max" : String(p));

export default function SpeedControl({ disabled }: { disabled: boolean }) {
  const { choice, presenting } = usePace();
  const leading = useRoom((s) => s.role === "owner");
  // a student shows the teacher's pace, the one the class watches (store/reactions.ts, from the room)
  const room = usePace((s) => s.room);
  const following = useRun((s) => s.following);
  const theirs = following && room !== undefined;
  const pace = theirs ? room : paceFor(choice, presenting, leading);
  const reason = theirs ? "your teacher's pace" : paceReason(choice, presenting, leading);
  return (
    <label className="train-field">
      speed
      <select
        aria-label="training speed"
        value={encode(pace)}
        disabled={disabled}
        title="steps per second: a slower pace lets a class watch the loss fall and the boundary move"
        onChange={(e) => {
          const next: Pace = e.target.value === "max" ? null : Number(e.target.value);
          usePace.getState().choose(next);
          void useTraining.getState().setPace(next);
        }}
      >
        {PACES.map((p) => (
          <option key={encode(p)} value={encode(p)}>
            {paceLabel(p)}
          </option>
        ))}
      </select>
      {reason && <span className="train-note">{reason}</span>}
    </label>
  );
}
