// Classroom: start a room (the code, large, for the board, with a link and its QR code to
// share) or join one with its code; while in a room, a chip in the toolbar says so, with Fork
// (followers) and Leave, and a banner says plainly when the room is in trouble.
import { useEffect, useRef, useState } from "react";
import { roomLink, useRoom } from "../../store/room";
import Dialog from "../dialogs/Dialog";

/** The room's link as a QR code, drawn here (no network): phones in the room scan the board. */
function RoomQr({ link }: { link: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    // loaded when a room is led, not with the editor
    import("qrcode")
      .then((qr) => (live && canvas.current ? qr.toCanvas(canvas.current, link, { width: 200, margin: 1 }) : undefined))
      .catch(() => live && setFailed(true));
    return () => {
      live = false;
    };
  }, [link]);
  return failed ? (
    <p className="muted">(the QR code could not be drawn: share the link)</p>
  ) : (
    <canvas ref={canvas} className="room-qr" aria-label="QR code of the room link" width={200} height={200} />
  );
}

function ShareRoom({ code }: { code: string }) {
  const link = roomLink(code);
  const [copied, setCopied] = useState(false);
  return (
    <div className="room-share">
      <RoomQr link={link} />
      <div>
        <label htmlFor="room-link">or open this link</label>
        <input id="room-link" aria-label="room link" readOnly value={link} onFocus={(e) => e.target.select()} />
        <button
          type="button"
          className="small"
          onClick={() =>
            navigator.clipboard?.writeText(link).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? "copied" : "copy link"}
        </button>
      </div>
    </div>
  );
}

/** What is wrong with the room, for everyone in it: the server gone, the room not open yet
 * after a restart (students wait and rejoin by themselves), or gone for good. */
export function RoomBanner() {
  const trouble = useRoom((s) => s.trouble);
  if (!trouble) return null;
  return (
    <div className="banner room-banner" role="alert" aria-label="room problem">
      {trouble}{" "}
      <button type="button" className="small" onClick={() => useRoom.getState().dismissTrouble()}>
        dismiss
      </button>
    </div>
  );
}

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
          <ShareRoom code={code} />
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
      {/* the role word gives way on a narrow projector (styles.css); the code stays for late joiners */}
      <span className="room-role">{role === "owner" ? "Leading" : "Following"} </span>room {code}
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
