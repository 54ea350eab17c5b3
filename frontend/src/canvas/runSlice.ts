// A node's or edge's slice of the run store, in one subscription: while a run's records stream
// in, the run store changes every frame and every subscription of every node and edge is
// checked on each change, so each keeps one, and a cheap one.
import { useRef } from "react";
import { isWithin } from "../doc/modules";
import { type RunState, useRun } from "../store/run";

/** `select`'s fields, the same object for as long as they hold the same values: the component
 * re-renders only when one of them changes. (zustand's useShallow does this by building Maps
 * of both objects' entries, which costs more than the rest of a run's update when a thousand
 * components do it on every frame.) */
export function useRunSlice<T extends Record<string, unknown>>(select: (s: RunState) => T): T {
  const last = useRef<T | null>(null);
  return useRun((s) => {
    const next = select(s);
    const prev = last.current;
    if (prev && sameFields(prev, next)) return prev;
    last.current = next;
    return next;
  });
}

function sameFields<T extends Record<string, unknown>>(a: T, b: T) {
  for (const k in b) if (!Object.is(a[k], b[k])) return false;
  return true;
}

/** Whether step mode's current record is about the module instance at path `key` or about a
 * node or edge inside it: a closed instance lights up as a whole for the records of its inside. */
export function focusWithin(focus: RunState["focus"], key: string) {
  return (focus.node !== undefined && isWithin(key, focus.node)) || (focus.edge !== undefined && isWithin(key, focus.edge));
}
