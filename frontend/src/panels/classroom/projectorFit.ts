// Presenting, the lesson and a question to the class are a band above the canvas and step
// mode's controls a band below it (lesson.css): when a band comes, goes or changes height (the
// next lesson step's text, a question's answers coming in), the canvas changes size and the
// graph, fitted to the old size, would be cut off at the bottom. So while presenting, the
// graph is fitted whole again whenever the canvas's height changes.
import { useEffect } from "react";
import { useReadableFit } from "../../canvas/fit";

export const PRESENTER_FIT = { padding: 0.04, maxZoom: 1.25, whole: true };

export function useProjectorRefit(presenter: boolean) {
  const fit = useReadableFit();
  useEffect(() => {
    const canvas = document.querySelector(".centre > .canvas");
    if (!presenter || !canvas) return;
    let height = canvas.getBoundingClientRect().height;
    let frame = 0;
    const seen = new ResizeObserver(() => {
      const now = canvas.getBoundingClientRect().height;
      if (Math.abs(now - height) < 2) return;
      height = now;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => fit(PRESENTER_FIT));
    });
    seen.observe(canvas);
    return () => {
      seen.disconnect();
      cancelAnimationFrame(frame);
    };
  }, [presenter, fit]);
}
