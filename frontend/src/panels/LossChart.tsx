// The loss of every training step, drawn with uPlot and redrawn at most once a frame, on a log
// axis while the loss stays above 0 (lossAxis.ts).
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useTraining } from "../store/training";
import { logSplits, lossScale, tickLabels } from "./lossAxis";

/** `height`: 110 px in the training tab (the boundary fits below it at 1280x800); presenter
 * mode draws it larger, for the back of a room (ProjectorTraining.tsx). */
export default function LossChart({ height = 110 }: { height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  // the chart is made again when the axis changes kind (a new training, a loss that hits 0)
  const scale = useTraining((s) => lossScale(s.losses));
  // how many points it draws, from which step: tests (and a room joiner's check) read them
  const points = useTraining((s) => s.steps.length);
  const first = useTraining((s) => (s.steps.length ? s.steps[0] : null));
  // and the loss it starts at: a training from fresh weights starts where the first one did
  const startLoss = useTraining((s) => (s.losses.length ? s.losses[0] : null));
  // a large chart is read from afar: larger tick labels, and room for them
  const font = height > 150 ? "bold 15px system-ui, sans-serif" : undefined;
  useEffect(() => {
    const el = box.current!;
    const chart = new uPlot(
      {
        width: el.clientWidth || 300,
        height,
        legend: { show: false },
        scales: { x: { time: false }, y: scale === "log" ? { distr: 3, log: 10 } : {} },
        axes: [
          { label: "step", size: font ? 44 : 30, ...(font ? { font, labelFont: font } : {}) },
          {
            size: font ? 62 : 50,
            ...(font ? { font } : {}),
            values: (_u, splits) => tickLabels(splits),
            // on a log axis uPlot labels only the powers of ten: label every tick logSplits gives
            ...(scale === "log"
              ? {
                  splits: (_u: unknown, _i: number, min: number, max: number) => logSplits(min, max),
                  filter: (_u: unknown, splits: number[]) => splits,
                }
              : {}),
          },
        ],
        series: [{}, { label: "loss", stroke: "#dc2626", width: 1.5, points: { show: false } }],
      },
      [[], []],
      el,
    );
    let frame = 0;
    const draw = () => {
      frame = 0;
      const { steps, losses } = useTraining.getState();
      chart.setData([steps, losses]);
    };
    draw();
    const stop = useTraining.subscribe((s, prev) => {
      if (s.losses !== prev.losses && !frame) frame = requestAnimationFrame(draw);
    });
    return () => {
      stop();
      cancelAnimationFrame(frame);
      chart.destroy();
    };
  }, [scale, height, font]);
  return (
    <div
      className="loss-chart"
      ref={box}
      role="img"
      aria-label="loss chart"
      data-scale={scale}
      data-points={points}
      data-first={first ?? ""}
      data-start-loss={startLoss ?? ""}
    />
  );
}
