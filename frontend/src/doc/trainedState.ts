// A module made from trained nodes behaves as an `nn.Module` class does: its definition says
// how a new instance starts (a layer's weights drawn from its seed, a parameter's typed or
// seeded values), and the trained values belong to the one instance that replaces the nodes,
// in its `state` (where a training writes an instance's values: backend/graph/document/
// modules.py write_state). A second instance then starts from its own fresh initialisation, of
// whatever size its input has, never from another instance's trained weights.
import type { DocNode, OpSpec } from "../api/types";
import { isTrained, type NodeParams } from "./freshWeights";
import { MODULE_OP, SEP } from "./modules";

export type State = Record<string, Record<string, unknown>>;

/** The params in which a layer op keeps its trained state (a linear's `weight` and
 * `bias_value`, batch_norm's running statistics ...): the registry's tensor params of an op
 * that is not a source (the registry's LayerForm.state). A source's `value` is not among them:
 * it may be typed by a person. */
export function layerState(spec: OpSpec | undefined): string[] {
  if (!spec || spec.source) return [];
  return spec.params.filter((p) => p.type === "tensor").map((p) => p.name);
}

/** What the last training is known to have written (`seeded`: the params before the graph's
 * first training, `written`: its last write-back, both by node id); absent: nothing known. */
export interface TrainingWrites {
  seeded: NodeParams;
  written: NodeParams;
}

/** Node `n` split into what its module's definition keeps (`params`: fresh values, as before
 * any training) and the trained values its first instance keeps (`state`, keyed by the paths
 * under that instance: `fc` for the node itself, `b/fc` inside a nested instance `b`). */
export function splitTrained(
  n: DocNode,
  spec: OpSpec | undefined,
  writes?: TrainingWrites,
): { params: Record<string, unknown>; state: State } {
  const state: State = {};
  let params = { ...n.params };
  if (n.op === MODULE_OP) {
    // a nested instance's own trained values go with it into the outer instance's state
    const inner = (params.state ?? {}) as State;
    for (const [path, values] of Object.entries(inner)) state[`${n.id}${SEP}${path}`] = { ...values };
    delete params.state;
    return { params, state };
  }
  const own: Record<string, unknown> = {};
  for (const p of layerState(spec))
    if (params[p] != null) {
      own[p] = params[p];
      delete params[p]; // drawn anew from the (instance's) seed, of the size its input has
    }
  const before = writes?.seeded[n.id];
  if (before && spec?.source && isTrained(n.params, before, writes.written[n.id])) {
    // a trained parameter: the definition keeps the value it had before training
    own.value = params.value;
    params = { ...params, value: before.value };
    if (params.value == null) delete params.value;
  }
  if (Object.keys(own).length) state[n.id] = own;
  return { params, state };
}
