// The toolbar: the graph's name, the File, Edit and Teach groups, and the run controls, in one
// row at 1280 px (the less-used commands are in MoreMenu; Undo, Redo and Help are icons).
import { hostChannel } from "../../api/host";
import { emptyDocument } from "../../doc/convert";
import { openDocument, saveToServer } from "../../doc/files";
import { useEditor } from "../../store/editor";
import { RoomChip } from "../classroom/Classroom";
import MoreMenu from "./MoreMenu";
import RunControls from "./RunControls";
import UploadReport from "../dialogs/UploadReport";
import SaveConflict from "../dialogs/SaveConflict";
import type { DialogName } from "../dialogs/dialogName";

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
      <span className="doc-name" aria-label="graph name" title={name}>
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
        <MoreMenu open={props.open} layout={props.layout} presenter={props.presenter} />
      </div>
      <div role="group" aria-label="edit" className="group">
        <button type="button" className="icon" aria-label="Undo" onClick={ed.undo} disabled={!canUndo} title="Undo (Ctrl+Z)">
          ↶
        </button>
        <button type="button" className="icon" aria-label="Redo" onClick={ed.redo} disabled={!canRedo} title="Redo (Ctrl+Shift+Z)">
          ↷
        </button>
        <button type="button" className="presenting" onClick={props.fit} title="F">
          Fit view
        </button>
        <button type="button" className="icon" aria-label="Help" onClick={() => props.open("help")} title="Help (?)">
          ?
        </button>
      </div>
      <div role="group" aria-label="teach" className="group">
        {/* rooms are a server's: a notebook's editor (api/host.ts) has none */}
        {!hostChannel() && (
          <button type="button" className="classroom" onClick={() => props.open("classroom")}>
            Classroom
          </button>
        )}
        <button type="button" aria-pressed={props.presenter} onClick={() => props.setPresenter(!props.presenter)}>
          Presenter
        </button>
        <RoomChip />
      </div>
      <RunControls />
      <UploadReport />
      <SaveConflict />
    </header>
  );
}
