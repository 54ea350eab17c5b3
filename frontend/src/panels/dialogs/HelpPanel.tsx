// The keyboard shortcuts, in one list that App's key handler is written from; and the legend
// of the canvas's colours and marks.
import CanvasLegend from "./CanvasLegend";
import Dialog from "./Dialog";

export const SHORTCUTS: [string, string][] = [
  ["Ctrl+Enter", "run forward"],
  ["Ctrl+Shift+Enter", "run backward"],
  ["Ctrl+Z / Ctrl+Shift+Z", "undo / redo (also Ctrl+Y)"],
  ["Ctrl+C / Ctrl+V", "copy / paste the selected nodes"],
  ["Ctrl+D", "duplicate the selected nodes"],
  ["Delete / Backspace", "delete the selection"],
  ["Ctrl+A", "select every node"],
  ["Ctrl+G", "make a module of the selected nodes (also right-click)"],
  ["Ctrl+Shift+G", "unpack the selected module instance"],
  ["Double-click a module", "open it (the breadcrumbs go back out)"],
  ["Ctrl+S", "save to the server"],
  ["F", "fit the graph in view"],
  ["L", "auto-layout"],
  ["Double-click canvas", "search and add an op there"],
  ["Shift+drag", "select several nodes"],
  ["?", "this help"],
];

export default function HelpPanel({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <table className="shortcuts">
        <tbody>
          {SHORTCUTS.map(([keys, what]) => (
            <tr key={keys}>
              <th>
                <kbd>{keys}</kbd>
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <CanvasLegend />
    </Dialog>
  );
}
