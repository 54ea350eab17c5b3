// A module name's field, shared by "Make module" and "Rename module".
/** The field says at once what is wrong with the name typed (`problem`). */
export default function ModuleNameField(props: {
  id: string;
  label: string;
  value: string;
  problem: string | null;
  onChange(name: string): void;
}) {
  const { id, label, value, problem, onChange } = props;
  return (
    <div className="param-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        autoFocus
        value={value}
        aria-invalid={problem ? true : undefined}
        onChange={(e) => onChange(e.target.value.trim())}
      />
      {problem && (
        <div className="field-error" role="alert">
          {problem}
        </div>
      )}
    </div>
  );
}
