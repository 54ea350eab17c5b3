// @vitest-environment jsdom
// The editor's keys in a notebook widget (its shadow root) and on a page: heard from the
// editor only, never from a field.
import { act, createElement, useRef } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useShortcuts } from "./shortcuts";
import { useEditor } from "./store/editor";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const actions = { layout: vi.fn(), fit: vi.fn(), help: vi.fn() };

function Editor() {
  const app = useRef<HTMLDivElement>(null);
  useShortcuts(actions, app);
  return createElement(
    "div",
    { ref: app, className: "app" },
    createElement("input", { "aria-label": "value" }),
    createElement("div", { className: "pane", tabIndex: 0 }),
  );
}

function press(target: Element, key: string) {
  // a key as the browser sends it: it bubbles and crosses shadow roots
  target.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, composed: true }));
}

let root: Root;
let host: HTMLElement;

function mount(inShadow: boolean): ParentNode {
  host = document.createElement("div");
  document.body.append(host);
  const into = document.createElement("div");
  into.tabIndex = -1; // (the widget's frame, widget.tsx)
  const parent = inShadow ? host.attachShadow({ mode: "open" }) : host;
  parent.append(into);
  root = createRoot(into);
  act(() => root.render(createElement(Editor)));
  return parent;
}

beforeEach(() => {
  vi.clearAllMocks();
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
  vi.restoreAllMocks();
});

describe("the editor's keys", () => {
  it("in a notebook widget, act on keys typed in the editor, not in its fields", () => {
    const shadow = mount(true);
    const deleted = vi.spyOn(useEditor.getState(), "deleteSelection");
    const field = shadow.querySelector("input")!;
    const pane = shadow.querySelector(".pane")!;
    // typing in a field: Backspace edits the text, `l` is a letter
    press(field, "Backspace");
    press(field, "l");
    expect(deleted).not.toHaveBeenCalled();
    expect(actions.layout).not.toHaveBeenCalled();
    press(pane, "l");
    press(pane, "Backspace");
    expect(actions.layout).toHaveBeenCalledTimes(1);
    expect(deleted).toHaveBeenCalledTimes(1);
  });

  it("in a notebook widget, leave the notebook's own keys to the notebook", () => {
    mount(true);
    const deleted = vi.spyOn(useEditor.getState(), "deleteSelection");
    const cell = document.createElement("div");
    cell.tabIndex = 0;
    document.body.append(cell);
    press(cell, "l");
    press(cell, "Delete");
    expect(actions.layout).not.toHaveBeenCalled();
    expect(deleted).not.toHaveBeenCalled();
    cell.remove();
  });

  it("in a notebook widget, keep the focus when a key removes the focused node", async () => {
    const shadow = mount(true) as ShadowRoot;
    const node = shadow.querySelector<HTMLElement>(".pane")!;
    vi.spyOn(useEditor.getState(), "deleteSelection").mockImplementation(() => node.remove());
    node.focus();
    expect(shadow.activeElement).toBe(node);
    press(node, "Delete");
    await new Promise((r) => setTimeout(r, 0));
    expect(shadow.activeElement).toBe(shadow.firstElementChild);
  });

  it("on a page, act on keys anywhere but in a field", () => {
    const page = mount(false);
    press(page.querySelector("input")!, "f");
    expect(actions.fit).not.toHaveBeenCalled();
    press(page.querySelector(".pane")!, "f");
    press(document.body, "?");
    expect(actions.fit).toHaveBeenCalledTimes(1);
    expect(actions.help).toHaveBeenCalledTimes(1);
  });
});
