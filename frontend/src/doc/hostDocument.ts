// In a notebook (api/host.ts), the kernel holds the document: each edit goes to it shortly
// after it is made (the kernel's `w.document`), and a document the kernel sends replaces the
// open one. It takes the place the working copy has in a browser tab (files.ts).
import type { HostChannel } from "../api/host";
import type { GraphDocument } from "../api/types";
import { useEditor } from "../store/editor";
import { openDocument } from "./files";

export function followHost(host: HostChannel) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = "";
  const send = () => {
    const doc = useEditor.getState().document();
    const text = JSON.stringify(doc);
    if (text === last) return;
    last = text;
    host.edited(doc);
  };
  const stop = useEditor.subscribe((s, prev) => {
    if (s.nodes === prev.nodes && s.edges === prev.edges && s.meta === prev.meta) return;
    clearTimeout(timer);
    timer = setTimeout(send, 150);
  });
  host.onDocument((doc: GraphDocument) => {
    last = JSON.stringify(doc);
    openDocument(doc, {}, false);
  });
  return () => {
    clearTimeout(timer);
    stop();
  };
}
