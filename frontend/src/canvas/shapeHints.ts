// What to try when shapes do not fit, said at the node before anything runs: the validation's
// dry run (store/shapes.ts) gives PyTorch's error for an op whose input shapes cannot work,
// and these hints read it with the names of the nodes wired in. And one shape that works but
// is rarely meant: a flatten from dim 0 (PyTorch's default) that folds the batch into the
// features of the linear layer it feeds.

const MATMUL = /shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)/;

/** A hint for PyTorch's "mat1 and mat2 shapes cannot be multiplied (AxB and CxD)" at a node
 * whose first input is `input` and second `other` (their names); null for another message. */
export function matmulHint(message: string, names: { input: string; other: string }): string | null {
  const m = MATMUL.exec(message);
  if (!m) return null;
  const [a, b, c, d] = m.slice(1).map(Number);
  const { input, other } = names;
  const differ = `the inner sizes differ (${b} and ${c})`;
  if (b === d) return `${differ}: transpose ${other}? (${input} @ ${other}.T is ${a}x${c})`;
  if (d === a) return `${differ}: swap the inputs? (${other} @ ${input} is ${c}x${b})`;
  if (a === c) return `${differ}: transpose ${input}? (${input}.T @ ${other} is ${b}x${d})`;
  return `${differ}: ${input}'s last size must be ${other}'s first`;
}

/** A flatten from dim 0 of an input of 2 or more dims into a linear layer: the first dim
 * (usually the batch) goes into the features. Null when that is not so. */
export function flattenHint(
  params: Record<string, unknown>,
  inputShape: number[] | undefined,
  feedsLinear: boolean,
): string | null {
  const start = typeof params.start_dim === "number" ? params.start_dim : 0;
  if (start !== 0 || !feedsLinear || !inputShape || inputShape.length < 2) return null;
  const features = inputShape.reduce((p, n) => p * n, 1);
  const kept = inputShape.slice(1).reduce((p, n) => p * n, 1);
  return (
    `flattens dim 0 (size ${inputShape[0]}) too: the linear layer gets ${features.toLocaleString("en")} ` +
    `features. Flatten from dim 1? (start_dim=1: ${inputShape[0]} rows of ${kept.toLocaleString("en")})`
  );
}
