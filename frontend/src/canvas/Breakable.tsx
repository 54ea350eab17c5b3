// A face's name with a line-break opportunity after each run of underscores: a long name
// (`binary_cross_entropy`) wraps as `binary_cross_` / `entropy`, not mid-word. textWrap.ts
// counts the lines the same way (Run.names), so the node is sized for it.
import { Fragment } from "react";
import { nameParts } from "./textWrap";

export default function Breakable({ text }: { text: string }) {
  const parts = nameParts(text);
  if (parts.length === 1) return <>{text}</>;
  return (
    <>
      {parts.map((p, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {p}
        </Fragment>
      ))}
    </>
  );
}
