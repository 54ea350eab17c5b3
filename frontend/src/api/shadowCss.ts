// The widget's styles (widget.tsx): in its build, every stylesheet a module imports arrives here
// as text (vite.widget.config.ts) and goes into the widget's shadow root, where it styles the
// editor and nothing of the notebook around it. Stylesheets of modules loaded later (a lazy
// panel) are added when they arrive.
const sheets: string[] = [];
const listeners = new Set<(css: string) => void>();

// the editor's variables are declared on :root for a page; in a shadow root, on its host
const scoped = (css: string) => css.replace(/:root\b/g, ":host");

export function addCss(css: string) {
  const text = scoped(css);
  sheets.push(text);
  for (const l of listeners) l(text);
}

/** Every stylesheet so far, then each later one, into `target`. */
export function styleInto(target: ShadowRoot | HTMLElement) {
  const add = (css: string) => {
    const el = document.createElement("style");
    el.textContent = css;
    target.prepend(el);
  };
  for (const css of sheets) add(css);
  listeners.add(add);
  return () => listeners.delete(add);
}
