// The ops as GET /api/ops describes their derivatives, for the chain-rule panel's unit tests:
// opDerivatives.json is the registry's own description (tests/graph/test_derivatives.py checks
// it still is, and rewrites it), filled out here to whole OpSpecs.
import type { OpSpec, ParamSpec, PortSpec } from "../api/types";
import kept from "./opDerivatives.json";

type Kept = Pick<OpSpec, "name" | "scalar_for"> & {
  inputs: Pick<PortSpec, "name" | "derivative" | "no_grad">[];
  params: Pick<ParamSpec, "name" | "default">[];
};

function whole(v: Kept): OpSpec {
  return {
    category: "",
    doc: "",
    outputs: ["out"],
    source: false,
    ...v,
    inputs: v.inputs.map((p) => ({ optional: false, variadic: false, doc: "", ...p })),
    params: v.params.map((p) => ({ type: "float", doc: "", ...p })),
  };
}

/** op name -> its spec, as the page holds it (store/editor.ts `ops`). */
export const OPS: Record<string, OpSpec> = Object.fromEntries(
  Object.entries(kept as unknown as Record<string, Kept>).map(([name, v]) => [name, whole(v)]),
);
