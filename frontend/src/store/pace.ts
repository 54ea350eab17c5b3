// How fast a training goes (docs/training.md, `steps_per_second`): as fast as the machine can,
// or at a pace a class can watch. The default is "classroom pace" while the page presents or
// leads a room, else the machine's speed; a choice the user makes wins over the default.
import { create } from "zustand";

/** Steps per second; null: as fast as the machine goes. */
export type Pace = number | null;

export const CLASSROOM_PACE = 20;
/** The speed control's choices, fastest first. */
export const PACES: readonly Pace[] = [null, 100, CLASSROOM_PACE, 5];

export interface PaceState {
  choice: Pace | undefined; // undefined: none made, the default applies
  presenting: boolean; // presenter mode is on (App sets it)
  leading: boolean; // this page leads a room (store/reactions.ts keeps it as the room store's)
  /** A room's follower: the owner's pace (store/reactions.ts, from the room), shown instead of
   * its own; undefined while not following or not told yet. */
  room: Pace | undefined;
  choose(pace: Pace): void;
  setPresenting(on: boolean): void;
  setLeading(on: boolean): void;
  setRoomPace(pace: Pace | undefined): void;
}

export const usePace = create<PaceState>()((set) => ({
  choice: undefined,
  presenting: false,
  leading: false,
  room: undefined,
  choose: (pace) => set({ choice: pace }),
  setPresenting: (on) => set({ presenting: on }),
  setLeading: (on) => set({ leading: on }),
  setRoomPace: (room) => set({ room }),
}));

/** The pace a training gets: the user's choice, else classroom pace for a class. */
export function paceFor(choice: Pace | undefined, presenting: boolean, leading: boolean): Pace {
  if (choice !== undefined) return choice;
  return presenting || leading ? CLASSROOM_PACE : null;
}

/** Why the pace is what it is, for the control's note (null: nothing to explain). */
export function paceReason(choice: Pace | undefined, presenting: boolean, leading: boolean): string | null {
  if (choice !== undefined || !(presenting || leading)) return null;
  return `classroom pace while ${presenting ? "presenting" : "leading a room"}`;
}

export function paceLabel(p: Pace): string {
  if (p === null) return "max";
  return p === CLASSROOM_PACE ? `${p} /s (classroom)` : `${p} /s`;
}

/** The pace now (the choice, presenting, leading a room). */
export function currentPace(): Pace {
  const { choice, presenting, leading } = usePace.getState();
  return paceFor(choice, presenting, leading);
}
