// A window over the page for a view that needs more room than the side panel gives (the tensor
// view, the feature-map grid): moved by its title bar, resized from its corner (CSS `resize`),
// kept inside the page. A React portal into the editor's root (`.app`, which in a notebook is
// inside the widget's shadow root, where its styles are), so the view keeps its state and its
// store subscriptions while it is drawn elsewhere. Not modal: the canvas stays usable.
import { type PointerEvent, type ReactNode, useLayoutEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import "./floatingWindow.css";

interface Props {
  title: ReactNode;
  /** What assistive technology calls the window. */
  label: string;
  onClose(): void;
  children: ReactNode;
  className?: string;
}

const MARGIN = 16;

/** The first place and size: most of the page, beside the side panel's edge. */
function firstBox() {
  const w = Math.min(1000, window.innerWidth - 2 * MARGIN);
  const h = Math.min(700, window.innerHeight - 2 * MARGIN);
  return { x: Math.max(MARGIN, (window.innerWidth - w) / 2), y: Math.max(MARGIN, (window.innerHeight - h) / 2), w, h };
}

export default function FloatingWindow({ title, label, onClose, children, className }: Props) {
  const [box] = useState(firstBox);
  // drawn into the editor's root: found from where the window is mounted
  const anchor = useRef<HTMLSpanElement>(null);
  const [host, setHost] = useState<Element | null>(null);
  useLayoutEffect(() => setHost(anchor.current?.closest(".app") ?? document.body), []);
  const [at, setAt] = useState({ x: box.x, y: box.y });
  const drag = useRef<{ dx: number; dy: number } | null>(null);

  const down = (e: PointerEvent<HTMLElement>) => {
    if ((e.target as HTMLElement).closest("button")) return;
    drag.current = { dx: e.clientX - at.x, dy: e.clientY - at.y };
    e.currentTarget.setPointerCapture(e.pointerId);
  };
  const move = (e: PointerEvent<HTMLElement>) => {
    if (!drag.current) return;
    // the title bar stays on the page: the window can always be moved back
    const x = Math.min(window.innerWidth - 80, Math.max(-box.w + 80, e.clientX - drag.current.dx));
    const y = Math.min(window.innerHeight - 32, Math.max(0, e.clientY - drag.current.dy));
    setAt({ x, y });
  };
  const up = () => {
    drag.current = null;
  };

  const win = (
    <section
      className={`float-window ${className ?? ""}`}
      role="dialog"
      aria-modal="false"
      aria-label={label}
      style={{ left: at.x, top: at.y, width: box.w, height: box.h }}
      onKeyDown={(e) => e.key === "Escape" && onClose()}
    >
      <header className="float-title" onPointerDown={down} onPointerMove={move} onPointerUp={up} onPointerCancel={up}>
        <span className="float-name">{title}</span>
        <button type="button" className="float-close" aria-label={`close ${label}`} onClick={onClose} title="back into the side panel">
          ×
        </button>
      </header>
      <div className="float-body">{children}</div>
    </section>
  );
  return (
    <>
      <span ref={anchor} hidden />
      {host && createPortal(win, host)}
    </>
  );
}
