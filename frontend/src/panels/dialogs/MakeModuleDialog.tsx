// "Make module": asks the new module's name (a Python class name, as export writes it), says
// at once what is wrong with it, and makes the module from the selection.
import { useState } from "react";
import { moduleNameProblem } from "../../doc/modules";
import { useEditor } from "../../store/editor";
import { makeFromSelection, useModuleUi } from "../../store/modules";
import Dialog from "./Dialog";
import ModuleDefDialog from "./ModuleDefDialog"; // rename and delete: mounted with this one
import ModuleNameField from "./ModuleNameField";

export default function MakeModuleDialog() {
  const naming = useModuleUi((s) => s.naming);
  return (
    <>
      {naming && <NameForm />}
      <ModuleDefDialog />
    </>
  );
}

function NameForm() {
  const close = () => useModuleUi.getState().setNaming(false);
  const modules = useEditor((s) => s.meta.modules ?? []);
  const count = useEditor((s) => s.nodes.filter((n) => n.selected).length);
  const [name, setName] = useState(() => {
    let i = modules.length + 1;
    while (modules.some((m) => m.name === `Block${i}`)) i++;
    return `Block${i}`;
  });
  const [refused, setRefused] = useState<string | null>(null);
  const problem = moduleNameProblem(name, modules) ?? refused;
  return (
    <Dialog title="Make module" onClose={close}>
      <form
        className="make-module"
        onSubmit={(e) => {
          e.preventDefault();
          if (moduleNameProblem(name, modules)) return;
          const why = makeFromSelection(name);
          if (why) setRefused(why);
          else close();
        }}
      >
        <p className="muted">
          The {count} selected node{count === 1 ? "" : "s"} become one node; wires into and out of the selection become its
          inputs and outputs.
        </p>
        <ModuleNameField
          id="module-name"
          label="module name"
          value={name}
          problem={problem}
          onChange={(v) => {
            setName(v);
            setRefused(null);
          }}
        />
        <button type="submit" disabled={!!moduleNameProblem(name, modules)}>
          Make module
        </button>
      </form>
    </Dialog>
  );
}
