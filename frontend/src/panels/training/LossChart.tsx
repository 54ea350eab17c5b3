// The loss of every training step, drawn with uPlot and redrawn at most once a frame, on a log
// axis while the loss stays above 0 (lossAxis.ts); and, for a classifier, its accuracy at each
// snapshot on a 0–100% axis on the right (chartData.ts lays both on one step axis).
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useTraining } from "../../store/training";
import { chartData } from "./chartData";
import { logSplits, lossScale, spacedTicks, tickLabels } from "./lossAxis";

const LOSS = "#dc2626";
const ACCURACY = "#2563eb";

/** `height`: 160 px in the training tab, tall enough for five readable loss ticks; presenter
 * mode draws it larger (200 px and up), with larger labels, for the back of a room
 * (ProjectorTraining.tsx). */
export default function LossChart({ height = 160 }: { height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  // the chart is made again when the axis changes kind (a new training, a loss that hits 0)
  const scale = useTraining((s) => lossScale(s.losses));
  // and when an accuracy curve appears or goes (its axis on the right)
  const accuracy = useTraining((s) => s.accuracies.length > 0);
  // how many points it draws, from which step: tests (and a room joiner's check) read them
  const points = useTraining((s) => s.steps.length);
  const accuracyPoints = useTraining((s) => s.accuracies.length);
  const first = useTraining((s) => (s.steps.length ? s.steps[0] : null));
  // and the loss it starts at: a training from fresh weights starts where the first one did
  const startLoss = useTraining((s) => (s.losses.length ? s.losses[0] : null));
  // a large chart is read from afar: larger tick labels, and room for them
  const font = height >= 200 ? "bold 15px system-ui, sans-serif" : "12px system-ui, sans-serif";
  const large = height >= 200;
  useEffect(() => {
    const el = box.current!;
    const lossAxis: uPlot.Axis = {
      scale: "y",
      size: large ? 62 : 50,
      font,
      stroke: LOSS,
      values: (_u, splits) => tickLabels(splits),
      // on a log axis uPlot labels only the powers of ten: label the ticks logSplits gives,
      // as many as fit without touching (the roundest first)
      ...(scale === "log"
        ? {
            splits: (_u: unknown, _i: number, min: number, max: number) => logSplits(min, max),
            filter: (u: uPlot, splits: number[]) =>
              spacedTicks(
                splits,
                splits.map((v) => u.valToPos(v, "y")),
                large ? 22 : 16,
              ),
          }
        : {}),
    };
    const chart = new uPlot(
      {
        width: el.clientWidth || 300,
        height,
        legend: { show: false },
        scales: {
          x: { time: false },
          y: scale === "log" ? { distr: 3, log: 10 } : {},
          // a share of the dataset: the whole axis, so that 60% never looks like a perfect score
          acc: { range: [0, 100] },
        },
        axes: [
          { label: "step", size: large ? 44 : 36, font, labelFont: font, labelSize: large ? 20 : 16 },
          lossAxis,
          ...(accuracy
            ? [
                {
                  scale: "acc",
                  side: 1,
                  size: large ? 70 : 52,
                  font,
                  stroke: ACCURACY,
                  grid: { show: false },
                  splits: () => [0, 25, 50, 75, 100],
                  values: (_u: unknown, splits: number[]) => splits.map((v) => `${v}%`),
                } as uPlot.Axis,
              ]
            : []),
        ],
        series: [
          {},
          { label: "loss", scale: "y", stroke: LOSS, width: 1.5, points: { show: false }, spanGaps: true },
          ...(accuracy
            ? [{ label: "accuracy", scale: "acc", stroke: ACCURACY, width: 2, points: { show: true, size: 5 }, spanGaps: true }]
            : []),
        ],
      },
      accuracy ? [[], [], []] : [[], []],
      el,
    );
    let frame = 0;
    const draw = () => {
      frame = 0;
      const { steps, losses, accuracySteps, accuracies } = useTraining.getState();
      chart.setData(chartData(steps, losses, accuracy ? { steps: accuracySteps, values: accuracies } : null));
    };
    draw();
    const stop = useTraining.subscribe((s, prev) => {
      if ((s.losses !== prev.losses || s.accuracies !== prev.accuracies) && !frame) frame = requestAnimationFrame(draw);
    });
    return () => {
      stop();
      cancelAnimationFrame(frame);
      chart.destroy();
    };
  }, [scale, accuracy, height, font, large]);
  return (
    <figure className="loss-figure">
      {accuracy && (
        <figcaption className="chart-key" aria-label="chart key">
          <span style={{ color: LOSS }}>━ loss (left)</span>
          <span style={{ color: ACCURACY }}>━● accuracy (right)</span>
        </figcaption>
      )}
      <div
        className="loss-chart"
        ref={box}
        role="img"
        aria-label="loss chart"
        data-scale={scale}
        data-points={points}
        data-accuracy-points={accuracyPoints}
        data-height={height}
        data-first={first ?? ""}
        data-start-loss={startLoss ?? ""}
      />
    </figure>
  );
}
