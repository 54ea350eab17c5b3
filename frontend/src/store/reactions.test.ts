// The stores' meeting place (store/reactions.ts) against a fake connection: a room's events
// reach the other stores on a follower's page only, a joiner is shown what the room showed,
// and a page out of its room has its graph back.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { emit, fake } from "../testing/fakeConnection";

vi.mock("./connection", async () => (await import("../testing/fakeConnection")).connectionModule);

import type { Summary, TraceRecord } from "../api/types";
import { squareOfASum } from "../testing/documents";
import { useEditor } from "./editor";
import { useLesson } from "./lesson";
import { usePace } from "./pace";
import { useQuiz } from "./quiz";
import { startReactions } from "./reactions";
import { useRoom } from "./room";
import { useRun } from "./run";

const value = (node: string): TraceRecord => ({ kind: "value", node, summary: { shape: [], dtype: "float32", numel: 1 } as unknown as Summary });
const records = [value("x"), value("y"), value("a"), value("z")];

describe("reactions", () => {
  let stop = () => {};
  beforeEach(() => {
    stop();
    fake.requests = [];
    useRoom.setState({ code: null, role: null, welcome: null, trouble: null });
    useEditor.getState().load(squareOfASum());
    useEditor.getState().setReadOnly(false);
    useRun.getState().catchUp({ run_id: "r1", mode: "forward", target: null }, records, null);
    stop = startReactions();
  });

  it("shows a joiner what the room showed, then follows the owner's step mode", async () => {
    fake.replies.set("room_join", {
      code: "ABCDEF",
      graph: squareOfASum(),
      run_started: { run_id: "r2", mode: "forward", target: null },
      records,
      run_finished: null,
      step: 2,
      lesson: 0,
      pace: { steps_per_second: 5 },
    });
    expect(await useRoom.getState().join("abcdef")).toBeNull();
    expect(useRun.getState().following).toBe(true);
    expect(useEditor.getState().readOnly).toBe(true);
    expect(usePace.getState().room).toBe(5);
    expect(useQuiz.getState().room).toEqual({ code: "ABCDEF", role: "follower" });
    expect([useRun.getState().runId, useRun.getState().step?.index]).toEqual(["r2", 2]);

    emit("room_step", { code: "ABCDEF", index: 3 });
    expect(useRun.getState().step?.index).toBe(3);
    emit("room_step", { code: "ABCDEF", index: null });
    expect(useRun.getState().step).toBeNull();
    emit("room_lesson", { code: "OTHERS", index: 1 }); // another room's: not this page's
    expect(useLesson.getState().index).toBe(0);
    emit("room_select", { code: "ABCDEF", edge: "a-z" });
    expect(useRun.getState().selectedEdge).toBe("a-z");
    expect(useEditor.getState().edges.filter((e) => e.selected).map((e) => e.id)).toEqual(["a-z"]);

    // out of the room: the graph on screen is this page's own again
    await useRoom.getState().leave();
    expect(fake.requests.at(-1)).toEqual(["room_leave", { code: "ABCDEF" }]);
    expect(useRun.getState().following).toBe(false);
    expect(useEditor.getState().readOnly).toBe(false);
    expect(usePace.getState().room).toBeUndefined();
    emit("room_step", { code: "ABCDEF", index: 1 });
    expect(useRun.getState().step).toBeNull();
  });

  it("leaves a page that leads a room out of the followers' events, and sends the room its state", async () => {
    fake.replies.set("room_create", { code: "OWNERS", secret: "s" });
    await useRoom.getState().create();
    expect(usePace.getState().leading).toBe(true);
    const sent = fake.requests.map(([event]) => event);
    expect(sent).toEqual(expect.arrayContaining(["room_update", "room_lesson", "room_pace", "room_step", "room_select"]));
    emit("room_step", { code: "OWNERS", index: 1 });
    expect(useRun.getState().step).toBeNull();
    // the owner's step mode goes to the room
    fake.requests = [];
    useRun.getState().enterStep();
    expect(fake.requests).toEqual([["room_step", { code: "OWNERS", index: 0 }]]);
    // stopped: nothing more is sent
    stop();
    stop = () => {};
    fake.requests = [];
    useRun.getState().stepTo(2);
    expect(fake.requests).toEqual([]);
  });
});
