// What the page says about itself: the connection banner and the passing notices.
import { useEffect } from "react";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";

export function ConnectionBanner() {
  const connected = useRun((s) => s.connected);
  const ever = useRun((s) => s.everConnected);
  if (connected) return null;
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
    const t = setTimeout(() => useEditor.setState({ notice: null }), notice.tone === "error" ? 8000 : 3000);
    return () => clearTimeout(t);
  }, [notice]);
  if (!notice) return null;
  return (
    <div className={`notice ${notice.tone}`} role={notice.tone === "error" ? "alert" : "status"}>
      {notice.text}
    </div>
  );
}
