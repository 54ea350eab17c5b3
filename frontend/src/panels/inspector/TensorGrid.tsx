// A small grid editor for 1-D and 2-D tensor values: one cell per element, rows and columns
// added or removed with buttons. Cells take numbers only; a bad cell is refused where it is.
import { useState } from "react";
import type { Nested } from "../../api/types";
import { parseNumber } from "../../doc/params";
import { formatNumber } from "../../format/annotate";

const MAX_CELLS = 64; // bigger tensors are edited as text

export default function TensorGrid(props: {
  value: Nested;
  label: string;
  onChange: (v: Nested) => void;
  readOnly?: boolean; // following a room: shown, not editable
}) {
  const readOnly = props.readOnly ?? false;
  const oneD = !Array.isArray((props.value as Nested[])[0]);
  const rows: number[][] = oneD
    ? [props.value as number[]]
    : (props.value as number[][]).map((r) => [...r]);
  const cols = rows[0]?.length ?? 0;
  const [bad, setBad] = useState<string | null>(null);
  if (rows.length * cols > MAX_CELLS) return null;

  const emit = (next: number[][]) => props.onChange(oneD ? next[0] : next);
  const setCell = (i: number, j: number, text: string) => {
    if (readOnly) return;
    const r = parseNumber(text);
    if (!r.ok) {
      setBad(`[${oneD ? j : `${i}, ${j}`}]: ${r.error}`);
      return;
    }
    const v = r.value as number;
    setBad(null);
    if (v === rows[i][j]) return;
    const next = rows.map((r) => [...r]);
    next[i][j] = v;
    emit(next);
  };

  return (
    <div className="tensor-grid" role="group" aria-label={`${props.label} grid`}>
      <table>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {r.map((v, j) => (
                <td key={`${i}-${j}-${v}`}>
                  <input
                    aria-label={`${props.label}[${oneD ? j : `${i}, ${j}`}]`}
                    defaultValue={formatNumber(v)}
                    readOnly={readOnly}
                    onBlur={(e) => setCell(i, j, e.target.value)}
                    onKeyDown={(e) => e.key === "Enter" && setCell(i, j, (e.target as HTMLInputElement).value)}
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <div className="grid-buttons">
        <button type="button" aria-label="add column" disabled={readOnly} onClick={() => emit(rows.map((r) => [...r, 0]))}>
          + col
        </button>
        <button
          type="button"
          aria-label="remove column"
          disabled={readOnly || cols <= 1}
          onClick={() => emit(rows.map((r) => r.slice(0, -1)))}
        >
          − col
        </button>
        <button
          type="button"
          aria-label="add row"
          disabled={readOnly}
          onClick={() => props.onChange([...(oneD ? [rows[0]] : rows), new Array(cols).fill(0)])}
        >
          + row
        </button>
        <button
          type="button"
          aria-label="remove row"
          disabled={readOnly || oneD}
          onClick={() => (rows.length === 2 ? props.onChange(rows[0]) : emit(rows.slice(0, -1)))}
        >
          − row
        </button>
      </div>
      {bad && (
        <div className="field-error" role="alert">
          {bad}
        </div>
      )}
    </div>
  );
}
