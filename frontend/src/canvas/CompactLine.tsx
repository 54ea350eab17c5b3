// A value's or a gradient's line on a node's large face (canvas/detail.ts "compact"): it
// wraps at its spaces into the lines the node keeps for it (nodeSize.ts reservedLines), and a
// text longer than those (a vector's three numbers) is drawn smaller, in the largest font that
// fits them, so that a number is never cut. The font is a share of the canvas's --lod-font:
// the widths scale with it at every zoom up to the one the node is sized for.
import { memo } from "react";
import { type FaceType, lineFont, reservedLines } from "./nodeSize";

export const CompactLine = memo(function CompactLine(props: {
  className: string;
  testId: string;
  text: string;
  kind: "value" | "grad";
  type: FaceType;
}) {
  const lines = reservedLines(props.type)[props.kind];
  const share = lineFont(props.text, lines, props.type) / props.type.font;
  return (
    <div
      className={`lod-line ${props.className}`}
      data-testid={props.testId}
      style={share < 1 ? { fontSize: `calc(var(--lod-font, 12px) * ${share.toFixed(3)})` } : undefined}
    >
      {props.text}
    </div>
  );
});
