// One param in the inspector, with the control its type calls for. Text is committed on Enter
// or blur; a value the registry's rules refuse stays in the field with the reason beside it.
import { useEffect, useId, useState } from "react";
import type { Nested, ParamSpec } from "../../api/types";
import { formatParam, parseParam, shapeOf } from "../../doc/params";
import TensorGrid from "./TensorGrid";

interface Props {
  spec: ParamSpec;
  value: unknown; // undefined: not set (the default applies)
  serverError?: string;
  onChange: (value: unknown) => void;
  readOnly?: boolean; // following a room: shown, not editable
}

export default function ParamField({ spec, value, serverError, onChange, readOnly = false }: Props) {
  const id = useId();
  const current = value === undefined ? spec.default : value;
  const [text, setText] = useState(formatParam(spec, current));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setText(formatParam(spec, current));
    setError(null);
  }, [spec, current]);

  const commit = (raw: string) => {
    if (readOnly) return;
    const r = parseParam(spec, raw);
    if (!r.ok) {
      setError(r.error);
      return;
    }
    setError(null);
    if (JSON.stringify(r.value) !== JSON.stringify(current)) onChange(r.value);
  };
  const shownError = error ?? serverError;
  const describedBy = shownError ? `${id}-err` : spec.doc ? `${id}-doc` : undefined;

  let control;
  if (spec.type === "bool") {
    control = (
      <input
        id={id}
        type="checkbox"
        checked={Boolean(current)}
        disabled={readOnly}
        onChange={(e) => onChange(e.target.checked)}
      />
    );
  } else if (spec.type === "choice") {
    control = (
      <select id={id} value={String(current)} disabled={readOnly} onChange={(e) => commit(e.target.value)}>
        {(spec.choices ?? []).map((c) => (
          <option key={String(c)} value={String(c)}>
            {String(c)}
          </option>
        ))}
      </select>
    );
  } else if (spec.type === "str" && (spec.max_length ?? 0) > 200) {
    // a file's text (a dataset's CSV): a text area, and a button to read it from a file
    control = (
      <>
        <textarea
          id={id}
          rows={4}
          value={text}
          spellCheck={false}
          readOnly={readOnly}
          aria-invalid={shownError ? true : undefined}
          aria-describedby={describedBy}
          onChange={(e) => setText(e.target.value)}
          onBlur={(e) => commit(e.target.value)}
        />
        <label className={`button small ${readOnly ? "disabled" : ""}`} aria-disabled={readOnly || undefined}>
          load a file…
          <input
            type="file"
            hidden
            disabled={readOnly}
            aria-label={`load ${spec.name} from a file`}
            onChange={async (e) => {
              const file = e.target.files?.[0];
              e.target.value = "";
              if (!file) return;
              if (file.size > (spec.max_length ?? 0)) {
                setError(`${file.name} is ${file.size.toLocaleString("en")} bytes; the limit is ${spec.max_length!.toLocaleString("en")}`);
                return;
              }
              const content = await file.text();
              setText(content);
              commit(content);
            }}
          />
        </label>
      </>
    );
  } else {
    control = (
      <input
        id={id}
        type="text"
        inputMode={spec.type === "float" || spec.type === "int" ? "decimal" : undefined}
        value={text}
        placeholder={spec.nullable ? "empty: none" : undefined}
        readOnly={readOnly}
        aria-invalid={shownError ? true : undefined}
        aria-describedby={describedBy}
        onChange={(e) => setText(e.target.value)}
        onBlur={(e) => commit(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") commit((e.target as HTMLInputElement).value);
          if (e.key === "Escape") {
            setText(formatParam(spec, current));
            setError(null);
          }
        }}
      />
    );
  }

  const shape = spec.type === "tensor" && current != null ? shapeOf(current) : null;
  return (
    <div className={`param-field ${shownError ? "invalid" : ""}`}>
      <label htmlFor={id}>{spec.name}</label>
      {control}
      {shownError && (
        <div id={`${id}-err`} className="field-error" role="alert">
          {shownError}
        </div>
      )}
      {!shownError && spec.doc && (
        <div id={`${id}-doc`} className="field-doc">
          {spec.doc}
        </div>
      )}
      {Array.isArray(shape) && shape.length >= 1 && shape.length <= 2 && (
        <TensorGrid value={current as Nested} onChange={onChange} label={spec.name} readOnly={readOnly} />
      )}
    </div>
  );
}
