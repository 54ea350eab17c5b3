// Working copies in the browser's storage, one per tab. Each tab writes under its own key, an id
// kept in sessionStorage (a reload keeps it, another tab has its own), so two tabs editing two
// graphs never overwrite each other's copy. A tab opened afresh starts from the copy written
// last, in any tab, as the page did when there was only one copy.

/** What the page keeps of a graph being edited (files.ts writes and reads it). */
export interface WorkingCopy {
  doc: unknown;
  graphId?: string | null;
  revision?: number | null;
  dirty?: boolean;
}

/** The part of the Web Storage API used here (localStorage, sessionStorage, or a test's map). */
export interface KeyValue {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

const PREFIX = "wiregrad.working.";
const TAB = "wiregrad.tab"; // in sessionStorage: this tab's id
// when each kept copy was written ({key: ms}), so that neither a new tab's read nor the pruning
// at each write has to parse every copy (whole graphs) to find out
const INDEX = "wiregrad.working-index";
const BEFORE_TABS = "wiregrad.working"; // the one copy kept before copies were per tab
export const KEPT = 8; // copies kept, the most recently written: tabs long closed go

function tabKey(session: KeyValue): string {
  let id = session.getItem(TAB);
  if (!id) {
    id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    session.setItem(TAB, id);
  }
  return PREFIX + id;
}

function parse(raw: string | null): WorkingCopy | null {
  if (!raw) return null;
  try {
    const saved = JSON.parse(raw);
    return saved && typeof saved === "object" && "doc" in saved ? saved : null;
  } catch {
    return null;
  }
}

function readIndex(local: KeyValue): Record<string, number> {
  try {
    const index = JSON.parse(local.getItem(INDEX) ?? "{}");
    return index && typeof index === "object" ? index : {};
  } catch {
    return {};
  }
}

/** Write this tab's copy; of the others, keep the KEPT - 1 written last. */
export function writeWorkingCopy(local: KeyValue, session: KeyValue, copy: WorkingCopy, now = Date.now()) {
  const key = tabKey(session);
  local.setItem(key, JSON.stringify(copy));
  const index = readIndex(local);
  index[key] = now;
  const newestFirst = Object.keys(index).sort((a, b) => index[b] - index[a]);
  for (const old of newestFirst.slice(KEPT)) {
    local.removeItem(old);
    delete index[old];
  }
  local.setItem(INDEX, JSON.stringify(index));
  local.removeItem(BEFORE_TABS); // read once, by the first tab to open after the change
}

/** This tab's copy; for a tab without one, the copy written last (or the one from before
 * copies were per tab). Null when there is none. */
export function readWorkingCopy(local: KeyValue, session: KeyValue): WorkingCopy | null {
  const own = parse(local.getItem(tabKey(session)));
  if (own) return own;
  const index = readIndex(local);
  const last = Object.keys(index).sort((a, b) => index[b] - index[a])[0];
  return parse(last ? local.getItem(last) : null) ?? parse(local.getItem(BEFORE_TABS));
}
