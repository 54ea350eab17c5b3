// The editor as a notebook widget (wiregrad.show, anywidget's front-end module): the same App,
// its styles kept in a shadow root so that the notebook's and the editor's never mix
// (api/shadowCss.ts), and one channel to the kernel (the widget's custom messages) standing in
// for Socket.IO and /api (api/widgetChannel.ts).
import "@xyflow/react/dist/style.css";
import "./styles.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import App from "./App";
import { setHostChannel } from "./api/host";
import { styleInto } from "./api/shadowCss";
import { WidgetChannel, type WidgetModel } from "./api/widgetChannel";

function render({ model, el }: { model: WidgetModel; el: HTMLElement }) {
  const height = Number(model.get("height")) || 640;
  // Keys typed in the editor are the editor's (shortcuts.ts hears those only): JupyterLab's and
  // Notebook 7's shortcuts (Lumino's) skip an event whose target, here this host, carries this
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  const shadow = el.attachShadow({ mode: "open" });
  const root = document.createElement("div");
  root.className = "wiregrad-widget";
  root.style.height = `${height}px`;
  root.style.position = "relative";
  // a click on the canvas keeps the focus in the editor (else it falls to the notebook, whose
  // command mode then takes the keys meant for the graph)
  root.tabIndex = -1;
  const sizing = document.createElement("style");
  sizing.textContent =
    `.app { height: ${height}px; } .wiregrad-widget { font-family: system-ui, sans-serif; }` +
    " .wiregrad-widget:focus { outline: none; }";
  shadow.append(root, sizing);
  const unstyle = styleInto(shadow);
  const channel = new WidgetChannel(model);
  setHostChannel(channel);
  const app = createRoot(root);
  app.render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
  return () => {
    app.unmount();
    unstyle();
    channel.close();
    setHostChannel(null);
  };
}

export default { render };
