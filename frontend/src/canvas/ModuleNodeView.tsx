// A module instance on the canvas: the module's name, one handle per input and output of its
// definition (labelled with the port's id), and after a run the values and gradients of its
// output ports (the run's `<instance>/<port>` nodes). Double-click opens the definition (Canvas.tsx);
// its ▸ button (or the node menu) expands it in place, its inner nodes drawn inside it
// (ModuleInside.tsx), the nodes it then grew over moved down below it.
import { Handle, type NodeProps, Position, useReactFlow, useStoreApi } from "@xyflow/react";
import { memo, useEffect } from "react";
import { useShallow } from "zustand/react/shallow";
import type { OpNode } from "../doc/convert";
import { formatCompact, formatSummary } from "../format/annotate";
import { useEditor } from "../store/editor";
import { useExpanded } from "../store/expandedModules";
import { boxOf } from "./nodeSize";
import { separated } from "./layout";
import { inView } from "./showBox";
import ModuleInside from "./ModuleInside";
import { useRunKey } from "../store/modules";
import { useShapes } from "../store/shapes";
import { useDetail } from "./detail";
import { shapeText } from "./faces";
import OpNodeView from "./OpNodeView";
import { focusWithin, useRunSlice } from "./runSlice";
import { InstanceStaleOffer } from "./StaleOffer";
import Breakable from "./Breakable";

/** What the canvas draws for a node: an instance of a module, or an op. */
function NodeSwitch(props: NodeProps<OpNode>) {
  return props.data.op === "module" ? <ModuleNodeView {...props} /> : <OpNodeView {...props} />;
}
export default memo(NodeSwitch);

const NO_PORTS = { inputs: [] as string[], outputs: [] as string[], known: false };

function ModuleNodeView({ id, data, selected }: NodeProps<OpNode>) {
  const name = String(data.params.module ?? "");
  const ports = useEditor(
    useShallow((s) => {
      const def = s.meta.modules?.find((m) => m.name === name);
      return def ? { inputs: def.inputs, outputs: def.outputs, known: true } : NO_PORTS;
    }),
  );
  const def = useEditor((s) => s.meta.modules?.find((m) => m.name === name));
  const key = useRunKey(id);
  const expanded = useExpanded((s) => s.keys.has(key)) && !!def;
  useMakeRoom(id, expanded);
  // its own problems and those of the nodes inside it (`l1/m`), the first of them shown
  const problems = useEditor(
    useShallow((s) => s.problems.filter((p) => !p.edge && (p.node === key || p.node?.startsWith(`${key}/`)))),
  );
  const detail = useDetail();
  const detailed = detail === "full";
  const seed = Number(data.params.seed ?? 0);
  const { focused } = useRunSlice((s) => ({ focused: focusWithin(s.focus, key) })); // step mode
  const cls = [
    "op-node",
    "module-node",
    selected ? "selected" : "",
    focused ? "focused" : "",
    problems.length || !ports.known ? "has-problem" : "",
    expanded ? "expanded" : "",
  ].join(" ");
  return (
    <div
      className={cls}
      aria-label={`module ${id}`}
      data-testid={`node-${id}`}
      title={`${name}: double-click to open it`}
    >
      {def && (
        <button
          type="button"
          className="module-expand nodrag"
          aria-label={`${expanded ? "collapse" : "expand"} ${id}`}
          aria-expanded={expanded}
          title={expanded ? "collapse: the instance alone again" : "expand in place: its nodes inside it"}
          onClick={() => useExpanded.getState().toggle(key)}
        >
          {expanded ? "▾" : "▸"}
        </button>
      )}
      <div className="op-node-title" data-testid={`face-${id}`}>
        {detailed && (
          <>
            <span className="face-name">
              <Breakable text={data.label || id} />
            </span>{" "}
            = <span className="module-name">{name}</span>
            {seed ? <span className="muted"> seed {seed}</span> : null}
          </>
        )}
      </div>
      <div className="op-node-ports">
        <div className="op-node-inputs">
          {ports.inputs.map((p) => (
            <div key={p} className="port port-in">
              <Handle type="target" position={Position.Left} id={p} aria-label={`${id} input ${p}`} />
              {detailed && <span>{p}</span>}
            </div>
          ))}
        </div>
        <div className="op-node-outputs">
          {ports.outputs.map((o) => (
            <div key={o} className="port port-out">
              {detailed && <OutName path={`${key}/${o}`} port={o} />}
              <Handle type="source" position={Position.Right} id={o} aria-label={`${id} output ${o}`} />
            </div>
          ))}
        </div>
      </div>
      <div className="annos">
        {detailed && ports.outputs.map((o) => <PortResult key={o} path={`${key}/${o}`} port={o} many={ports.outputs.length > 1} />)}
      </div>
      {detail === "compact" && (
        // zoomed out or presenting: the name and what its first output gave, in large type
        <div className="lod" title={`${id} = ${name}`}>
          <div className="lod-name">
            <Breakable text={data.label || id} />
            <span className="lod-op"> = {name}</span>
          </div>
          {ports.outputs[0] && <PortResult path={`${key}/${ports.outputs[0]}`} port="" many={false} compact />}
        </div>
      )}
      {!ports.known && (
        <div className="anno problem" role="alert">
          no module named {name} in this graph
        </div>
      )}
      {expanded && def && <ModuleInside def={def} runKey={key} />}
      <InstanceStaleOffer id={id} />
      {problems.slice(0, 1).map((p, i) => (
        <div key={i} className="anno problem" role="alert">
          {p.node !== key ? `${p.node!.slice(key.length + 1)}: ` : ""}
          {p.message}
          {problems.length > 1 ? ` (and ${problems.length - 1} more inside)` : ""}
        </div>
      ))}
    </div>
  );
}

/** Once an expanded instance has been drawn at its new size, the nodes it grew over moved
 * down below it (and those they then meet, layout.ts separated), the instance kept where it
 * stands, and the view panned to show it whole (zoomed out only where it does not fit at the
 * zoom it was expanded at). A view's change, as an opened document's layout is: no undo step. */
function useMakeRoom(id: string, expanded: boolean) {
  const { getNode, getNodes, getViewport, setViewport } = useReactFlow();
  const flow = useStoreApi();
  useEffect(() => {
    if (!expanded) return;
    let frame = requestAnimationFrame(() => {
      // (React Flow measures the grown node in a frame of its own)
      frame = requestAnimationFrame(() => {
        const me = getNode(id);
        if (!me?.measured?.height) return;
        const box = boxOf(me);
        const nodes = getNodes();
        const at = Object.fromEntries(nodes.map((n) => [n.id, n.position]));
        for (const n of nodes) {
          const b = boxOf(n);
          if (n.id === id || b.x >= box.x + box.width || box.x >= b.x + b.width) continue;
          if (b.y >= box.y + box.height || box.y >= b.y + b.height) continue;
          at[n.id] = { x: b.x, y: box.y + box.height + 16 };
        }
        const boxes = nodes.map((n) => ({ id: n.id, width: boxOf(n).width, height: boxOf(n).height }));
        const placed = separated(at, boxes);
        const changed = Object.fromEntries(
          nodes.filter((n) => placed[n.id].y !== n.position.y || placed[n.id].x !== n.position.x).map((n) => [n.id, placed[n.id]]),
        );
        if (Object.keys(changed).length) useEditor.getState().placeOpened(changed);
        const { width, height } = flow.getState();
        const view = inView(box, getViewport(), width, height);
        if (view) void setViewport(view, { duration: 200 });
      });
    });
    return () => cancelAnimationFrame(frame);
  }, [expanded, id, getNode, getNodes, getViewport, setViewport, flow]);
}

/** An output port's name, its shape (inferred before a run) in its title. */
function OutName({ path, port }: { path: string; port: string }) {
  const shape = shapeText(useShapes((s) => s.shapes[path]));
  return (
    <span data-testid={`shape-${path}`} title={shape ? `${port}: shape ${shape}` : port}>
      {port}
    </span>
  );
}

/** The value and gradient of one output port: the run's records of the node `path`. */
function PortResult(props: { path: string; port: string; many: boolean; compact?: boolean }) {
  const { path, port, many, compact } = props;
  const { value, grad } = useRunSlice((s) => ({ value: s.annotations.values[path], grad: s.annotations.nodeGrads[path] }));
  const lead = many ? `${port}: ` : "";
  if (compact)
    return (
      <>
        {value && (
          <div className="lod-line value" data-testid={`value-${path}`}>
            {formatCompact(value)}
          </div>
        )}
        {grad && (
          <div className="lod-line lod-grad grad" data-testid={`grad-${path}`}>
            ∇ {formatCompact(grad)}
          </div>
        )}
      </>
    );
  return (
    <>
      {value && (
        <div className="anno value" data-testid={`value-${path}`} title={formatSummary(value, 64)}>
          {lead}
          {formatSummary(value)}
        </div>
      )}
      {grad && (
        <div className="anno grad" data-testid={`grad-${path}`} title="gradient">
          ∇ {lead}
          {formatSummary(grad)}
        </div>
      )}
    </>
  );
}
