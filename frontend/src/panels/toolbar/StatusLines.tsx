// What the page says about itself: the connection banner and the passing notices.
import { hostChannel } from "../../api/host";
import { useEffect } from "react";
import { useEditor } from "../../store/editor";
import { useRoom } from "../../store/room";
import { useRun } from "../../store/run";

export function ConnectionBanner() {
  const connected = useRun((s) => s.connected);
  const ever = useRun((s) => s.everConnected);
  // in a room, the room's banner (panels/classroom/Classroom.tsx) says the server is gone and what happens to
  // the room: one banner per event, not two saying nearly the same
  const roomSays = useRoom((s) => s.trouble !== null);
  // an exported view (api/host.ts) has no server to connect to, and says so once in its toolbar
  if (connected || roomSays || hostChannel()?.readOnly) return null;
  return (
    <div className="banner" role="alert">
      {ever ? "Connection to the server lost — reconnecting…" : "Connecting to the server…"}
    </div>
  );
}

export function Notice() {
  const notice = useEditor((s) => s.notice);
  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => useEditor.getState().dismissNotice(), notice.tone === "error" ? 8000 : 3000);
    return () => clearTimeout(t);
  }, [notice]);
  if (!notice) return null;
  // a closing "(45 records)" is a detail the projector leaves out where room is short
  // (panels/classroom/lesson.css): the notice is never cut
  const detail = /^(.+?)( \([^()]*\))$/.exec(notice.text);
  return (
    <div className={`notice ${notice.tone}`} role={notice.tone === "error" ? "alert" : "status"}>
      {detail ? (
        <>
          {detail[1]}
          <span className="notice-detail">{detail[2]}</span>
        </>
      ) : (
        notice.text
      )}
    </div>
  );
}
