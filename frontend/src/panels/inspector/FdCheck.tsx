// The inspector's finite-difference check of a leaf's .grad (store/fdCheck.ts): one button,
// then autograd's number beside the central difference's, and whether they agree.
import { useEffect, useRef } from "react";
import { formatNumber } from "../../format/annotate";
import { cannotCheck, runFdCheck, useFdCheck } from "../../store/fdCheck";
import { useRun } from "../../store/run";

export default function FdCheck({ id }: { id: string }) {
  const running = useRun((s) => s.running);
  const mine = useFdCheck((s) => (s.node === id ? s : null));
  const busy = Boolean(mine?.busy);
  const r = mine?.result ?? null;
  const why = cannotCheck(id);
  // the answer comes below the inspector's fold: brought into view
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (r || mine?.error) box.current?.scrollIntoView({ block: "nearest" });
  }, [r, mine?.error]);
  return (
    <div className="fd-check" ref={box}>
      <button
        type="button"
        disabled={busy || running || why !== null}
        title={
          why ??
          "move the element with the largest gradient by ±h, run forward twice, and compare (f(x+h) − f(x−h)) / 2h with autograd's .grad"
        }
        onClick={() => void runFdCheck(id)}
      >
        {busy ? "checking… (two forward runs)" : "check .grad by finite differences"}
      </button>
      {r && (
        <p className={`fd-result ${r.ok ? "ok" : "bad"}`} role="status" aria-label="finite-difference check" data-ok={r.ok}>
          {id}[{r.index.join(", ")}]: autograd <b>{formatNumber(r.autograd)}</b>, finite difference{" "}
          <b>{formatNumber(r.numeric)}</b> (x ± {formatNumber(r.step / 2)}): they differ by {formatNumber(r.diff)},{" "}
          {r.ok ? "✓ agree" : "✗ do not agree"}
        </p>
      )}
      {mine?.error && (
        <p className="field-error" role="alert">
          {mine.error}
        </p>
      )}
    </div>
  );
}
