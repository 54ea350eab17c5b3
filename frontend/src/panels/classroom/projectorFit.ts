// Presenting, the lesson and a question to the class are a band above the canvas and step
// mode's controls a band below it (lesson.css): when a band comes, goes or changes height (the
// next lesson step's text, a question's answers coming in), the canvas changes size and the
// graph, fitted to the old size, would be cut off at the bottom. So while presenting, the
// graph is fitted whole again whenever the canvas's size changes (its width too: the panels
// tucked away as presenting starts, a training's column coming, widen or narrow it after the
// first fit, and the projector's nodes are sized for the fit: canvas/presenterType.ts).
import { useEffect } from "react";
import { PRESENTER_FIT, useReadableFit } from "../../canvas/fit";

export function useProjectorRefit(presenter: boolean) {
  const fit = useReadableFit();
  useEffect(() => {
    const canvas = document.querySelector(".centre > .canvas");
    if (!presenter || !canvas) return;
    let { width, height } = canvas.getBoundingClientRect();
    let frame = 0;
    const seen = new ResizeObserver(() => {
      const now = canvas.getBoundingClientRect();
      if (Math.abs(now.height - height) < 2 && Math.abs(now.width - width) < 2) return;
      ({ width, height } = now);
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
