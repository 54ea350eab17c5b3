// What an upload found, before anything on screen is replaced: a file that cannot be opened and
// why, or a document whose nodes have problems, each one a line, with "Open anyway".
import { openDocument } from "../../doc/files";
import { useEditor } from "../../store/editor";
import { useUploadReport } from "../../store/uploadReport";
import Dialog from "./Dialog";

export default function UploadReport() {
  const report = useUploadReport((s) => s.report);
  if (!report) return null;
  const close = useUploadReport.getState().close;
  const { file, check } = report;
  const problems = check.problems;
  return (
    <Dialog title={`Upload ${file}`} onClose={close}>
      {check.kind === "refused" ? (
        <p role="alert">
          {file} cannot be opened: {check.reason}
          {problems.length ? ":" : "."}
        </p>
      ) : (
        <p>
          {file} is a graph, with {problems.length === 1 ? "a problem" : `${problems.length} problems`} to fix
          after opening it:
        </p>
      )}
      {problems.length > 0 && (
        <ul className="upload-problems" aria-label="problems in the file">
          {problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
      <p className="dialog-buttons">
        {check.kind === "problems" && (
          <button
            type="button"
            className="primary"
            onClick={() => {
              close();
              // only now, with the file known to be a graph, the unsaved changes are asked about
              if (openDocument(check.doc)) useEditor.getState().setProblems(check.nodeErrors);
            }}
          >
            Open anyway
          </button>
        )}{" "}
        <button type="button" onClick={close}>
          {check.kind === "problems" ? "Cancel" : "OK"}
        </button>
      </p>
    </Dialog>
  );
}
