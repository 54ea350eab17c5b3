// The decision boundary of a model on 2-D data: its output over a grid as a heatmap (orange
// below the middle, blue above, as TensorFlow Playground colours it) with the data points.
import { useEffect, useRef } from "react";
import type { Boundary } from "../../api/types";
import { useTraining } from "../../store/training";

const SIZE = 240;

/** The output's midpoint and spread: probabilities centre on 0.5, anything else on 0. */
export function colourScale(values: number[][]) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of values)
    for (const v of row) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  const probabilities = lo >= 0 && hi <= 1;
  const mid = probabilities ? 0.5 : 0;
  const spread = probabilities ? 0.5 : Math.max(Math.abs(lo), Math.abs(hi), 1e-9);
  return (v: number) => Math.max(-1, Math.min(1, (v - mid) / spread)); // -1 .. 1
}

function rgb(t: number): [number, number, number] {
  // -1: orange (245, 147, 34), 0: white, 1: blue (8, 119, 189)
  const [r, g, b] = t < 0 ? [245, 147, 34] : [8, 119, 189];
  const a = Math.abs(t) * 0.75;
  return [255 + (r - 255) * a, 255 + (g - 255) * a, 255 + (b - 255) * a];
}

function draw(canvas: HTMLCanvasElement, b: Boundary) {
  const ctx = canvas.getContext("2d")!;
  const R = b.resolution;
  const img = ctx.createImageData(R, R);
  const scale = colourScale(b.values);
  for (let i = 0; i < R; i++)
    for (let j = 0; j < R; j++) {
      const [r, g, bl] = rgb(scale(b.values[i][j]));
      const k = ((R - 1 - i) * R + j) * 4; // row 0 is the lowest y: drawn at the bottom
      img.data.set([r, g, bl, 255], k);
    }
  const tile = document.createElement("canvas");
  tile.width = tile.height = R;
  tile.getContext("2d")!.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(tile, 0, 0, SIZE, SIZE);
  const px = (x: number) => ((x - b.x[0]) / (b.x[1] - b.x[0])) * SIZE;
  const py = (y: number) => SIZE - ((y - b.y[0]) / (b.y[1] - b.y[0])) * SIZE;
  const labels = b.points.map((p) => p[2]).filter((l): l is number => l !== undefined);
  const pointScale = colourScale([labels]);
  for (const [x, y, label] of b.points) {
    // a point without a label (the graph has none per point) is drawn grey
    const [r, g, bl] = label === undefined ? [120, 120, 120] : rgb(pointScale(label) >= 0 ? 1 : -1);
    ctx.beginPath();
    ctx.arc(px(x), py(y), 3, 0, Math.PI * 2);
    ctx.fillStyle = `rgb(${r},${g},${bl})`;
    ctx.fill();
    ctx.strokeStyle = "white";
    ctx.lineWidth = 1;
    ctx.stroke();
  }
}

export default function BoundaryView() {
  const boundary = useTraining((s) => s.boundary);
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (boundary && canvas.current) draw(canvas.current, boundary);
  }, [boundary]);
  if (!boundary) return null;
  return (
    <figure className="boundary">
      <canvas
        ref={canvas}
        width={SIZE}
        height={SIZE}
        role="img"
        aria-label={`decision boundary over ${boundary.points.length} points`}
      />
      <figcaption className="muted">
        the model's output over the data (orange: low, blue: high); dots: the data's labels
      </figcaption>
    </figure>
  );
}
