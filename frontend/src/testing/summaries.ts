// A tensor's summary as the server sends it, for the page's unit tests: its shape, the preview
// of its values, everything else plain (float32, requires grad, no NaN or Inf).
import type { Summary } from "../api/types";

export const summary = (shape: number[], preview: Summary["preview"]): Summary => ({
  shape,
  dtype: "float32",
  numel: shape.reduce((a, b) => a * b, 1),
  requires_grad: true,
  grad_fn: null,
  nan: 0,
  inf: 0,
  stats: null,
  preview,
});
