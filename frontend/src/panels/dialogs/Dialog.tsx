// A modal dialog: a labelled role="dialog" that Escape or the close button dismisses.
import { type ReactNode, useEffect } from "react";

export default function Dialog(props: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && props.onClose();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [props]);
  return (
    <div className="backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onClose()}>
      <div className={`dialog ${props.wide ? "wide" : ""}`} role="dialog" aria-modal="true" aria-label={props.title}>
        <header>
          <h2>{props.title}</h2>
          <button type="button" aria-label="close" onClick={props.onClose}>
            ×
          </button>
        </header>
        {props.children}
      </div>
    </div>
  );
}
