// The heatmap of a 2-D slice (TensorViewer.tsx): cells kept square enough to see, a diverging
// colour scale centred on 0, the value under the pointer read out.
import { type MouseEvent, useEffect, useMemo, useRef, useState } from "react";
import { formatNumber } from "../../format/annotate";
import { heatmapLayout } from "./heatmapLayout";
function colourOf(v: number, range: number): [number, number, number] {
  if (Number.isNaN(v)) return [160, 160, 160];
  const t = Math.max(-1, Math.min(1, range > 0 ? v / range : 0));
  const [r, g, b] = t < 0 ? [37, 99, 235] : [220, 38, 38];
  const k = Math.abs(t);
  return [255 + (r - 255) * k, 255 + (g - 255) * k, 255 + (b - 255) * k].map(Math.round) as [
    number,
    number,
    number,
  ];
}

export default function Heatmap({ values, rows, cols }: { values: number[]; rows: number; cols: number }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<{ i: number; j: number } | null>(null);
  const range = useMemo(() => {
    let m = 0;
    for (let k = 0; k < rows * cols; k++) {
      const a = Math.abs(values[k]);
      if (Number.isFinite(a) && a > m) m = a;
    }
    return m;
  }, [values, rows, cols]);
  const { cell, width, height } = heatmapLayout(rows, cols);

  useEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext("2d");
    if (!canvas || !ctx) return;
    // one pixel per element; CSS scales it up without smoothing
    const img = ctx.createImageData(cols, rows);
    for (let k = 0; k < rows * cols; k++) {
      const [r, g, b] = colourOf(values[k], range);
      img.data[4 * k] = r;
      img.data[4 * k + 1] = g;
      img.data[4 * k + 2] = b;
      img.data[4 * k + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
  }, [values, rows, cols, range]);

  const onMove = (e: MouseEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const j = Math.floor(((e.clientX - box.left) / box.width) * cols);
    const i = Math.floor(((e.clientY - box.top) / box.height) * rows);
    if (i >= 0 && i < rows && j >= 0 && j < cols) setHover({ i, j });
  };

  const size = `${rows}×${cols}`;
  return (
    <figure className="tv-heatmap">
      {/* square cells of at least MIN_CELL px: a tensor larger than the panel scrolls */}
      <div className="tv-heatmap-scroll" tabIndex={0} aria-label={`heatmap ${size}, scrollable`}>
        <canvas
          ref={ref}
          width={cols}
          height={rows}
          style={{ width, height }}
          data-cell={cell}
          role="img"
          aria-label={`heatmap ${size}`}
          title={`heatmap ${size}: blue negative, white 0, red positive (±${formatNumber(range)})`}
          onMouseMove={onMove}
          onMouseLeave={() => setHover(null)}
        />
      </div>
      <figcaption className="tv-hover" aria-live="polite">
        {hover
          ? `[${hover.i}, ${hover.j}] = ${formatNumber(values[hover.i * cols + hover.j])}`
          : `${size}, colour scale ±${formatNumber(range)}`}
      </figcaption>
    </figure>
  );
}
