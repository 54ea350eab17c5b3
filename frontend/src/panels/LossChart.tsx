// The loss of every training step, drawn with uPlot and redrawn at most once a frame.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useTraining } from "../store/training";

export default function LossChart() {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const chart = new uPlot(
      {
        width: el.clientWidth || 300,
        height: 150,
        legend: { show: false },
        scales: { x: { time: false } },
        axes: [{ label: "step", size: 30 }, { size: 46 }],
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
  }, []);
  return <div className="loss-chart" ref={box} role="img" aria-label="loss chart" />;
}
