// Renaming and deleting a module definition: the palette entry's context menu and the module
// inspector open these dialogs (store/modules.ts useModuleUi.defEdit). Rename checks the new
// name as "Make module" does; delete says which nodes use the module and offers to delete them
// with it. Each is one undo step.
import { useEffect, useRef, useState } from "react";
import { describeUses } from "../../doc/moduleDefs";
import { moduleNameProblem } from "../../doc/modules";
import { useEditor } from "../../store/editor";
import { deleteDefinition, renameDefinition, useModuleUi, usesOfDefinition } from "../../store/modules";
import Dialog from "./Dialog";
import ModuleNameField from "./ModuleNameField";

const close = () => useModuleUi.getState().setDefEdit(null);

export default function ModuleDefDialog() {
  const edit = useModuleUi((s) => s.defEdit);
  if (!edit) return null;
  return edit.action === "rename" ? <RenameForm from={edit.name} /> : <DeleteForm name={edit.name} />;
}

function RenameForm({ from }: { from: string }) {
  const modules = useEditor((s) => s.meta.modules);
  const others = (modules ?? []).filter((m) => m.name !== from);
  const readOnly = useEditor((s) => s.readOnly);
  const [name, setName] = useState(from);
  const [refused, setRefused] = useState<string | null>(null);
  const problem = (name === from ? null : moduleNameProblem(name, others)) ?? refused;
  const count = usesOfDefinition(from).length;
  return (
    <Dialog title="Rename module" onClose={close}>
      <form
        className="make-module"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem) return;
          const why = renameDefinition(from, name);
          if (why) setRefused(why);
          else close();
        }}
      >
        <p className="muted">
          The module {from} and its {count} instance{count === 1 ? "" : "s"} take the new name (their node ids stay).
        </p>
        <ModuleNameField
          id="module-rename"
          label="new name"
          value={name}
          problem={problem}
          onChange={(v) => {
            setName(v);
            setRefused(null);
          }}
        />
        <button type="submit" disabled={!!problem || name === from || readOnly}>
          Rename
        </button>
      </form>
    </Dialog>
  );
}

function DeleteForm({ name }: { name: string }) {
  const readOnly = useEditor((s) => s.readOnly);
  const opened = useEditor((s) => (s.meta.open ?? []).some((f) => f.module === name));
  const uses = usesOfDefinition(name);
  const [refused, setRefused] = useState<string | null>(null);
  const go = (withUses: boolean) => {
    const why = deleteDefinition(name, withUses);
    if (why) setRefused(why);
    else close();
  };
  const n = uses.length;
  return (
    <Dialog title="Delete module" onClose={close}>
      <div className="make-module">
        {opened ? (
          <p role="alert" className="field-error">
            {name} is open on the canvas: go back out of it first.
          </p>
        ) : n ? (
          <p role="alert">
            {name} is used by {n} node{n > 1 ? "s" : ""}: {describeUses(uses)}. Delete {n > 1 ? "them" : "it"} with it, or
            keep the module.
          </p>
        ) : (
          <p>No node uses {name}: deleting it removes only its definition.</p>
        )}
        {refused && (
          <p role="alert" className="field-error">
            {refused}
          </p>
        )}
        <div className="inspector-actions">
          {!opened && n > 0 && (
            <button type="button" className="danger" disabled={readOnly} onClick={() => go(true)}>
              Delete it and its {n} instance{n > 1 ? "s" : ""}
            </button>
          )}
          {!opened && n === 0 && (
            <button type="button" className="danger" disabled={readOnly} onClick={() => go(false)}>
              Delete module
            </button>
          )}
          <button type="button" onClick={close}>
            Keep it
          </button>
        </div>
      </div>
    </Dialog>
  );
}

/** The palette entry's context menu (right-click, or the keyboard's menu key / Shift+F10). */
export function ModuleDefMenu(props: { name: string; x: number; y: number; onClose: () => void }) {
  const { name, x, y, onClose } = props;
  const ref = useRef<HTMLDivElement>(null);
  const readOnly = useEditor((s) => s.readOnly);
  useEffect(() => {
    const away = (e: Event) => !ref.current?.contains(e.target as Node) && onClose();
    const esc = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    window.addEventListener("pointerdown", away);
    window.addEventListener("keydown", esc);
    ref.current?.querySelector("button")?.focus();
    return () => {
      window.removeEventListener("pointerdown", away);
      window.removeEventListener("keydown", esc);
    };
  }, [onClose]);
  const item = (label: string, action: "rename" | "delete") => (
    <button
      type="button"
      role="menuitem"
      disabled={readOnly}
      onClick={() => {
        onClose();
        useModuleUi.getState().setDefEdit({ name, action });
      }}
    >
      {label}
    </button>
  );
  return (
    <div
      ref={ref}
      className="popover node-menu"
      role="menu"
      aria-label={`module ${name} commands`}
      style={{ position: "fixed", left: x, top: y }}
    >
      {item("Rename module…", "rename")}
      {item("Delete module…", "delete")}
    </div>
  );
}
