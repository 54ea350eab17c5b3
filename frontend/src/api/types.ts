// The shapes of what the server sends and takes: docs/graph-format.md and docs/protocol.md.
import type { Nested, Typed } from "./typedWire";

export interface PortSpec {
  name: string;
  optional: boolean;
  variadic: boolean;
  doc: string;
  /** Set where no gradient flows back through this input: why, in the page's words, with
   * `{op}` and `{source}` to fill in (backend/graph/registry.py, Port.no_grad). */
  no_grad?: string;
  /** Set where gradients flow back through this input: its local derivative ∂out/∂port as the
   * chain-rule panel writes it (Port.derivative; panels/analysis/chainRule.ts fills in its params). */
  derivative?: PortDerivative;
}

/** How to read a derivative text: an elementwise factor, the edge's gradient written with the
 * upstream `grad`, or words for a Jacobian that is no elementwise factor. */
export type DerivativeKind = "elementwise" | "grad" | "jacobian";

export interface PortDerivative {
  text: string; // with placeholders for params: {p}, {p-1}, x^{p-1}, {p|value:text|...}
  kind: DerivativeKind;
  params: string[]; // the params the text depends on
  scalar?: string; // the text while the op's `scalar` param stands in for its scalar_for port
}

export type ParamType = "float" | "int" | "bool" | "choice" | "dims" | "shape" | "tensor" | "str";

export interface ParamSpec {
  name: string;
  type: ParamType;
  default: unknown;
  doc: string;
  min?: number;
  max?: number;
  choices?: unknown[];
  nullable?: boolean;
  max_length?: number; // str params: longer than a line (a CSV file's text) gets a text area
}

export interface OpSpec {
  name: string;
  category: string;
  doc: string;
  inputs: PortSpec[];
  outputs: string[];
  params: ParamSpec[];
  source: boolean;
  writes?: string; // an in-place op: the input port it writes into (docs/graph-format.md)
  branches?: boolean; // control flow (`if`): the first input picks which other one is computed
  scalar_for?: string; // the port the `scalar` param stands in for while it is unconnected
  call?: CallSpec; // how PyTorch code calls it (none for sources, layers and data)
}

/** How a call of an op is written (the registry's CallForm): the Python operator that writes it
 * (`+`, `@`), the form PyTorch code usually takes (`x.sum(dim=1)`: "method"), its other names. */
export interface CallSpec {
  operator: string;
  usual: "function" | "method" | "functional";
  aliases: string[];
}

export interface DocNode {
  id: string;
  op: string;
  params: Record<string, unknown>;
  position: { x: number; y: number };
  label?: string | null;
}

export interface DocEdge {
  id: string;
  source: string;
  sourcePort: string;
  target: string;
  targetPort: string;
}

export interface LessonStep {
  text: string;
  select: string[];
  run: "forward" | "backward" | "train" | null;
  options?: Record<string, boolean>;
  predict?: LessonPredict | null; // a question to the room at this step
}

/** A lesson step's question (docs/graph-format.md, "Lesson steps that ask"): exactly one of
 * `edge` and `node`. */
export interface LessonPredict {
  edge?: string | null;
  node?: string | null;
  what?: "value" | "grad";
  prompt?: string;
}

/** A subgraph used as a node (op `module`, param `module` its name): docs/graph-format.md. */
export interface ModuleDef {
  name: string; // a Python class name: how export writes it
  doc?: string;
  nodes: DocNode[];
  edges: DocEdge[];
  inputs: string[]; // ids of its module_input nodes: the instance's input ports, in order
  outputs: string[]; // ids of its module_output nodes: its output ports
}

export interface GraphDocument {
  format: "wiregrad.graph";
  version: 1 | 2; // 2 added `modules`
  name: string;
  description: string;
  nodes: DocNode[];
  edges: DocEdge[];
  target: string | null;
  lesson: LessonStep[];
  training?: TrainingSettings | null;
  modules?: ModuleDef[]; // version 2 only
}

// values as nested arrays (NaN and infinities spelled out), and arrays as they come typed
export type { Nested, Typed } from "./typedWire";

export interface Summary {
  shape: number[];
  dtype: string;
  numel: number;
  requires_grad: boolean;
  grad_fn: string | null;
  nan: number;
  inf: number;
  stats: { min: number; max: number; mean: number; std: number; norm: number } | null;
  preview?: Nested | null;
}

export interface AutogradEntry {
  id: string;
  name: string;
  node: string | null;
  param?: string | null;
  variable_shape?: number[];
  saved?: { shape: number[]; dtype: string }[];
}

/** A table of summaries as the server sends it (docs/protocol.md, "Summary tables"): rows
 * first .. first + rows - 1 of the run, one tensor each, all of one shape and dtype. */
export interface SummaryTable {
  kind: "summaries";
  first: number;
  rows: number;
  shape: number[];
  dtype: string;
  numel: number;
  requires_grad: boolean[];
  grad_fn: (string | null)[];
  // typed (api/typedWire.ts) unless a row has non-finite numbers, which come spelled in lists
  nan: number[] | Typed;
  inf: number[] | Typed;
  stats: (Nested[] | null)[] | Typed; // per row: [min, max, mean, std, norm], or null
  preview: Nested[] | Typed | null;
}

/** Values packed (docs/protocol.md, "Packed records"): one `value` record per node, its row in
 * `summary` at the same index, each with `cached: true` when the pack has it. */
export interface ValuesPack {
  kind: "values";
  nodes: string[];
  summary: number[];
  cached?: true;
}

/** Gradients packed: an item is a node id (a `node_grad` record) or [edge, source, target]
 * (an `edge_grad` record), its row in `summary` at the same index. */
export interface GradsPack {
  kind: "grads";
  items: (string | [edge: string, source: string, target: string])[];
  summary: number[];
}

/** A trace record as it comes off the wire: a summary is a row number of a table sent before
 * it, and values and gradients come packed (api/summaryRows.ts turns these into TraceRecords). */
export type WireRecord = SummaryTable | ValuesPack | GradsPack | WithRow<TraceRecord>;
type WithRow<R> = R extends { summary: Summary } ? Omit<R, "summary"> & { summary: number } : R;

export type TraceRecord =
  // version: the tensor's version counter, in documents with in-place ops
  | { kind: "value"; node: string; summary: Summary; cached?: boolean; version?: number }
  | { kind: "skipped"; node: string; reason: string }
  | { kind: "branch_not_taken"; node: string; port: "then" | "else"; edge: string }
  | { kind: "edge_grad"; edge: string; source: string; target: string; summary: Summary }
  | { kind: "node_grad"; node: string; summary: Summary }
  | { kind: "leaf_grad"; node: string; param: string | null; summary: Summary }
  | {
      kind: "autograd";
      nodes: AutogradEntry[];
      edges: { source: string; target: string; input: number }[];
    }
  | ({ kind: "error"; node: string | null; message: string; type: string } & VersionError);

/** What a version error adds to its error record (docs/protocol.md, "Trace records"). */
export interface VersionError {
  saved_by?: string | null;
  saved_op?: string;
  overwritten_by?: string | null;
  expected_version?: number;
  version?: number;
}

export interface NodeProblem {
  message: string;
  /** A problem the editor offers a fix for: "stale_values" (docs/protocol.md). */
  code?: string | null;
  node?: string | null;
  edge?: string | null;
  port?: string | null;
  param?: string | null;
}

export type RunMode = "forward" | "backward";

export interface RunFinished {
  run_id: string;
  status: "ok" | "error" | "cancelled";
  timings: Record<string, number>;
  records: number;
  target: string | null;
  error?: { node: string | null; message: string; type: string };
}

export interface TensorReply {
  run_id: string;
  kind: "value" | "grad";
  shape: number[];
  dtype: string;
  values: Nested; // a page (offset/count asked): the page's values, flat and row-major
  // the same values as a view of the message's buffer (api/typedWire.ts), which nothing has
  // converted: a viewer reads the elements it shows (`values` is written out when first read)
  typed?: Typed;
  numel?: number;
  offset?: number; // set when the reply is a page
  // a page's reply: the whole tensor's stats (finite values) and NaN/Inf counts
  stats?: { min: number; max: number; mean: number; std: number; norm: number } | null;
  nan?: number;
  inf?: number;
}

/** A graph in the server's store; `created` and `updated` are Unix times in seconds (the
 * server's time.time()), not milliseconds. */
export interface GraphInfo {
  id: string;
  name: string;
  created: number;
  updated: number;
  revision: number;
  share?: string; // the graph's share token: `?graph=ID&share=TOKEN` opens it read-only
}

/** One revision of a stored graph; `created` in Unix seconds, as in GraphInfo. */
export interface RevisionInfo {
  revision: number;
  created: number;
  name: string;
}

// -- training (docs/training.md) ------------------------------------------------------------
export interface TrainingSettings {
  loss: string | null;
  output?: string | null;
  optimizer: "sgd" | "adam";
  lr: number;
  momentum: number;
  steps: number;
  batch_size: number;
  seed: number;
}

export interface Boundary {
  x: [number, number];
  y: [number, number];
  resolution: number;
  values: number[][];
  points: ([number, number, number] | [number, number])[]; // [x, y, label]; no label if none
}

export interface TrainSnapshot {
  train_id: string;
  step: number;
  params: Record<string, Summary>;
  grads: Record<string, Summary>;
  boundary?: Boundary;
  accuracy?: number; // 0..1, a classifier's share of its dataset classified right (docs/training.md)
}

/** A room's last training as a joiner's `room_join` ack carries it (docs/training.md). */
export interface RoomTraining {
  train_id: string;
  steps: number;
  params: string[];
  status: "running" | "ok" | "stopped" | "error";
  progress: { steps: number[]; losses: number[] };
  snapshot: TrainSnapshot | null;
  finished: Omit<TrainFinished, "graph"> | null;
}

export interface TrainFinished {
  train_id: string;
  status: "ok" | "stopped" | "error";
  steps: number;
  loss: number | null;
  error?: string | { message: string; node?: string | null };
  graph?: GraphDocument;
}
