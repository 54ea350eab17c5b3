// The toolbar: the graph's name, the File, Edit and Teach groups, and the run controls.
import { emptyDocument } from "../doc/convert";
import { useEditor } from "../store/editor";
import { RoomChip } from "./Classroom";
import { downloadDocument, openDocument, saveToServer, uploadDocument } from "./files";
import RunControls from "./RunControls";
import UploadReport from "./UploadReport";

export type DialogName = "templates" | "open" | "export" | "import" | "help" | "classroom" | null;

export default function Toolbar(props: {
  open: (d: DialogName) => void;
  layout: () => void;
  fit: () => void;
  presenter: boolean;
  setPresenter: (on: boolean) => void;
}) {
  const name = useEditor((s) => s.meta.name);
  const dirty = useEditor((s) => s.dirty);
  const revision = useEditor((s) => s.revision);
  const canUndo = useEditor((s) => s.canUndo);
  const canRedo = useEditor((s) => s.canRedo);
  const ed = useEditor.getState();
  return (
    <header className="toolbar">
      <span className="brand">Wiregrad</span>
      <span className="doc-name" aria-label="graph name">
        {name}
        {dirty ? " •" : ""}
        {revision ? <span className="muted"> r{revision}</span> : null}
      </span>
      <div role="group" aria-label="file" className="group">
        <button type="button" onClick={() => openDocument(emptyDocument())}>
          New
        </button>
        <button type="button" onClick={() => props.open("templates")}>
          Templates
        </button>
        <button type="button" onClick={() => props.open("open")}>
          Open
        </button>
        <button type="button" onClick={() => saveToServer()} title="Ctrl+S">
          Save
        </button>
        <button type="button" onClick={() => saveToServer(true)}>
          Save as new
        </button>
        <button type="button" onClick={downloadDocument}>
          Download
        </button>
        <label className="button">
          Upload
          <input
            type="file"
            accept=".json,application/json"
            aria-label="upload a graph document"
            hidden
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) uploadDocument(f);
              e.target.value = "";
            }}
          />
        </label>
        <button type="button" onClick={() => props.open("export")}>
          Export
        </button>
        <button type="button" onClick={() => props.open("import")}>
          Import
        </button>
      </div>
      <div role="group" aria-label="edit" className="group">
        <button type="button" onClick={ed.undo} disabled={!canUndo} title="Ctrl+Z">
          Undo
        </button>
        <button type="button" onClick={ed.redo} disabled={!canRedo} title="Ctrl+Shift+Z">
          Redo
        </button>
        <button type="button" onClick={props.layout} title="L">
          Auto-layout
        </button>
        <button type="button" className="presenting" onClick={props.fit} title="F">
          Fit view
        </button>
        <button type="button" onClick={() => props.open("help")} title="?">
          Help
        </button>
      </div>
      <div role="group" aria-label="teach" className="group">
        <button type="button" onClick={() => props.open("classroom")}>
          Classroom
        </button>
        <button type="button" aria-pressed={props.presenter} onClick={() => props.setPresenter(!props.presenter)}>
          Presenter
        </button>
        <RoomChip />
      </div>
      <RunControls />
      <UploadReport />
    </header>
  );
}
