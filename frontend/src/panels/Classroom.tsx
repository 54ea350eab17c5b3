// Classroom: start a room (the code, large, for the board) or join one with its code; while in
// a room, a chip in the toolbar says so, with Fork (followers) and Leave.
import { useState } from "react";
import { useRoom } from "../store/room";
import Dialog from "./Dialog";

export function ClassroomDialog({ onClose }: { onClose: () => void }) {
  const { code, role } = useRoom();
  const [typed, setTyped] = useState("");
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title="Classroom" onClose={onClose}>
      {code && role === "owner" ? (
        <div className="room-code-box">
          <p>Students join with this code:</p>
          <p className="room-code" aria-label="room code to share">
            {code}
          </p>
          <p className="muted">They follow your graph, runs, trainings and step mode live.</p>
        </div>
      ) : (
        <>
          <p>
            <button
              type="button"
              className="primary"
              onClick={() => useRoom.getState().create().catch((err: Error) => setError(err.message))}
            >
              Start a room
            </button>{" "}
            <span className="muted">and lead: everyone who joins sees what you do.</span>
          </p>
          <form
            className="join-room"
            onSubmit={async (e) => {
              e.preventDefault();
              const problem = await useRoom
                .getState()
                .join(typed)
                .catch((err: Error) => err.message);
              if (problem) setError(problem);
              else onClose();
            }}
          >
            <label htmlFor="room-code-input">room code</label>
            <input
              id="room-code-input"
              value={typed}
              maxLength={6}
              autoComplete="off"
              onChange={(e) => setTyped(e.target.value.toUpperCase())}
            />
            <button type="submit" disabled={typed.trim().length < 6}>
              Join
            </button>
          </form>
          {error && (
            <p className="field-error" role="alert">
              {error}
            </p>
          )}
        </>
      )}
    </Dialog>
  );
}

export function RoomChip() {
  const { code, role } = useRoom();
  if (!code) return null;
  const room = useRoom.getState();
  return (
    <div className={`room-chip ${role}`} role="status" aria-label="room">
      {role === "owner" ? `Leading room ${code}` : `Following room ${code}`}
      {role === "follower" && (
        <button type="button" className="small" onClick={() => room.fork()}>
          Fork
        </button>
      )}
      <button type="button" className="small" onClick={() => room.leave()}>
        Leave
      </button>
    </div>
  );
}
