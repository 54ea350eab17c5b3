// A module instance expanded in place (store/expandedModules.ts): the nodes of its definition
// drawn inside the instance's node where it stands, at their places in the definition, each
// with its face and what the last run gave it in this instance (the records `<instance>/<id>`),
// and the wires between them. A view to read: the definition is edited by opening it.
import { useMemo } from "react";
import type { ModuleDef } from "../api/types";
import { formatSummary } from "../format/annotate";
import { useEditor } from "../store/editor";
import { allFaces, displayName } from "./faces";
import { annoFontSize, LINE, NODE_WIDTH, titleHeight } from "./nodeSize";
import { useRunSlice } from "./runSlice";
import Breakable from "./Breakable";

const PAD = 10; // around the inner nodes
const STACKED_GAP = 40; // between the inner nodes of a definition written without positions

/** An inner node's height: its face as the node's title wraps it (nodeSize.ts), then a line
 * for its value and one for its gradient. */
export const cardHeight = (face: string, name: string) => titleHeight({ face, name }) + 2 * LINE + 4;

/** Where each inner node is drawn, from the box's top left, and the box's size. */
export function insideLayout(def: Pick<ModuleDef, "nodes">, faces: Record<string, string>) {
  const nodes = def.nodes;
  // a definition written without positions (all on one spot): one row, in its order
  const stacked = nodes.length > 1 && nodes.every((n) => n.position.x === nodes[0].position.x && n.position.y === nodes[0].position.y);
  const raw = nodes.map((n, i) => (stacked ? { x: i * (NODE_WIDTH + STACKED_GAP), y: 0 } : n.position));
  const x0 = Math.min(...raw.map((p) => p.x));
  const y0 = Math.min(...raw.map((p) => p.y));
  const at = Object.fromEntries(nodes.map((n, i) => [n.id, { x: PAD + raw[i].x - x0, y: PAD + raw[i].y - y0 }]));
  const width = Math.max(...Object.values(at).map((p) => p.x)) + NODE_WIDTH + PAD;
  const height = Math.max(...nodes.map((n) => at[n.id].y + cardHeight(faces[n.id] ?? n.id, n.id))) + PAD;
  return { at, width, height };
}

export default function ModuleInside({ def, runKey }: { def: ModuleDef; runKey: string }) {
  const ops = useEditor((s) => s.ops);
  const faces = useMemo(
    () =>
      allFaces(
        {
          nodes: def.nodes.map((n) => ({ id: n.id, data: { op: n.op, params: n.params, label: n.label } })),
          edges: def.edges.map((e) => ({ source: e.source, target: e.target, targetHandle: e.targetPort })),
        },
        ops,
      ),
    [def, ops],
  );
  const { at, width, height } = useMemo(() => insideLayout(def, faces), [def, faces]);
  return (
    <div
      className="module-inside nodrag"
      role="group"
      aria-label={`inside ${runKey}`}
      style={{ width: `${width}px`, height: `${height}px` }}
    >
      <svg className="inside-wires" width={width} height={height} aria-hidden="true">
        {def.edges.map((e) => {
          const s = at[e.source];
          const t = at[e.target];
          if (!s || !t) return null;
          const [x1, y1, x2, y2] = [s.x + NODE_WIDTH, s.y + 14, t.x, t.y + 14];
          const bend = Math.max(30, Math.abs(x2 - x1) / 2);
          return <path key={e.id} d={`M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`} />;
        })}
      </svg>
      {def.nodes.map((n) => (
        <InsideNode
          key={n.id}
          path={`${runKey}/${n.id}`}
          name={displayName({ id: n.id, op: n.op, params: n.params, label: n.label })}
          face={faces[n.id] ?? n.id}
          port={n.op === "module_input" || n.op === "module_output"}
          at={at[n.id]}
        />
      ))}
    </div>
  );
}

/** One inner node: its face, and its value and gradient in this instance. */
function InsideNode(props: { path: string; name: string; face: string; port: boolean; at: { x: number; y: number } }) {
  const { path, name, face, port, at } = props;
  const { value, grad } = useRunSlice((s) => ({ value: s.annotations.values[path], grad: s.annotations.nodeGrads[path] }));
  const line = (text: string) => {
    const px = annoFontSize(text);
    return px < 12 ? { fontSize: `${px}px` } : undefined;
  };
  return (
    <div
      className={`inside-node ${port ? "inside-port" : ""}`}
      data-testid={`inside-${path}`}
      title={face}
      style={{ left: `${at.x}px`, top: `${at.y}px`, width: `${NODE_WIDTH}px`, minHeight: `${cardHeight(face, name)}px` }}
    >
      <div className="op-node-title inside-face">
        <b>
          <Breakable text={name} />
        </b>
        <Breakable text={face.slice(name.length)} />
      </div>
      {value && (
        <div className="anno value" data-testid={`inside-value-${path}`} style={line(formatSummary(value))}>
          {formatSummary(value)}
        </div>
      )}
      {grad && (
        <div className="anno grad" data-testid={`inside-grad-${path}`} style={line(`∇ ${formatSummary(grad)}`)}>
          ∇ {formatSummary(grad)}
        </div>
      )}
    </div>
  );
}
