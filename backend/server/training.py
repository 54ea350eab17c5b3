"""Training over Socket.IO (docs/training.md): `train` and `train_control`, one training per
client at a time, each in a thread of its own.

A training holds the client's slot in the run manager (`Client.active`) as a run does, with a
`Control` that stops like a run's cancel Event: so a new `run` stops the training, a new
`train` stops the client's run or training, and a disconnect stops it, all through the one
mechanism runs already have.

The loop streams as it goes, at little cost per step (a list append and a clock read): every
step's loss is buffered and sent as `train_progress` when `flush_seconds` (50 ms) have passed;
at those moments, when 250 ms have passed since the last one, a `train_snapshot` (summaries of
the parameters and gradients, the decision boundary); at the end a last progress packet, a last
snapshot and `train_finished` with the trained document.

Every packet goes through `_Session.emit(event, payload)`: to the client, then to the run
manager's `mirror(sid, event, payload)` hook when one is set (rooms.py copies an owner's
packets to its followers), the same shape as the runs' `send`.
"""

import threading
import time
import uuid

import numpy as np
from pydantic import ValidationError

from ..graph import GraphInvalid
from ..graph.running.summary import summarize_many
from ..graph.running.trainer import Control, Trainer, TrainingError, settings_for
from .events import on_message, problems_reply, read_graph
from .protocol import TrainControlRequest, TrainRequest
from .training_queue import TrainingQueue

SNAPSHOT_SECONDS = 0.25
BOUNDARY_RESOLUTION = 40

_IN_PROGRESS = {}  # train_id -> _Session, across managers: what `in_progress` reports
_LOCK = threading.Lock()


def in_progress():
    """The ids of the trainings whose threads are still going (for tests and diagnostics)."""
    with _LOCK:
        return set(_IN_PROGRESS)


class PacedControl(Control):
    """A training's Control with a pace: `steps_per_second` (None: as fast as it goes) and an
    interruptible wait between steps, so a class can watch the loss fall and the boundary move.
    A stop, a pause or a new pace ends the wait at once."""

    def __init__(self, steps_per_second=None):
        super().__init__()
        self.steps_per_second = steps_per_second

    def pause(self):
        with self._cond:
            self.paused = True
            self._cond.notify_all()  # a wait for the next step ends: the pause starts now

    def set_pace(self, steps_per_second):
        with self._cond:
            self.steps_per_second = steps_per_second
            self._cond.notify_all()

    def wait(self, seconds):
        """Wait up to `seconds`; True when the whole wait passed (nothing interrupted it)."""
        with self._cond:
            pace = self.steps_per_second
            end = time.perf_counter() + seconds
            while not (self.stopped or self.paused or self.steps_per_second != pace):
                left = end - time.perf_counter()
                if left <= 0:
                    return True
                self._cond.wait(left)
            return False


class _TimeUp(Exception):
    """A training past Limits.max_train_seconds (the trained values so far are kept)."""


class _Session:
    """One training of one client."""

    def __init__(self, manager, sid, train_id, trainer, control, client):
        self.manager, self.sid, self.train_id = manager, sid, train_id
        self.trainer, self.control, self.client = trainer, control, client
        self.done = False
        self.snapshot_step = None  # the step of the last train_snapshot sent

    def emit(self, event, payload):
        m = self.manager
        m.socketio.emit(event, m.runs.for_client(self.sid, payload), to=self.sid)
        mirror = m.mirror if m.mirror is not None else getattr(m.runs, "mirror", None)
        if mirror is not None:
            mirror(self.sid, event, payload)

    def snapshot(self):
        tr = self.trainer
        if tr.step_count == self.snapshot_step:
            return  # sent already: a stop right after a pause, or after a throttled snapshot
        self.snapshot_step = tr.step_count
        params = tr.parameters()
        grads = tr.grads()
        preview = self.manager.settings.limits.preview_elements
        summaries = summarize_many(list(params.values()) + list(grads.values()), preview)
        names = list(params) + list(grads)
        k = len(params)
        packet = {
            "train_id": self.train_id,
            "step": tr.step_count,
            "params": dict(zip(names[:k], summaries[:k])),
            "grads": dict(zip(names[k:], summaries[k:])),
        }
        boundary = tr.boundary(BOUNDARY_RESOLUTION)
        if boundary is not None:
            packet["boundary"] = boundary
        accuracy = tr.accuracy()  # a classifier's share of right answers on its whole dataset
        if accuracy is not None:
            packet["accuracy"] = accuracy
        self.emit("train_snapshot", packet)

    def run(self):
        queue = self.manager.queue
        if not queue.enter(lambda: self.control.stopped, self._queued):
            self._stopped_while_queued()
            return
        try:
            # one computation of a client at a time: the run or training this one stopped
            # ends first
            with self.client.computing, np.errstate(all="ignore"):  # inf and nan are values
                self._run()
        finally:
            queue.leave()

    def _queued(self, position, running):
        self.emit(
            "train_queued", {"train_id": self.train_id, "position": position, "running": running}
        )

    def _stopped_while_queued(self):
        """A training stopped (or replaced by a newer run) before its turn: it ends without
        a step and without a graph (nothing was trained)."""
        self._release()
        finished = {"train_id": self.train_id, "status": "stopped", "steps": 0, "loss": None}
        self.emit("train_finished", {**finished, "graph": None})

    def _release(self):
        self.done = True
        client = self.client
        with client.lock:
            if client.active is not None and client.active[0] == self.train_id:
                client.active = None
        self.manager.forget(self)

    def _run(self):
        tr, train_id, emit = self.trainer, self.train_id, self.emit
        flush_seconds = self.manager.settings.flush_seconds
        emit("train_started", {"train_id": train_id, "steps": tr.steps, "params": tr.param_names})
        steps, losses = [], []
        clock = time.perf_counter
        last = [clock(), clock()]  # last progress packet, last snapshot
        max_seconds = self.manager.settings.limits.max_train_seconds
        deadline = [clock() + max_seconds, None]  # the time limit; when a pause began
        released = [clock()]  # when the last step was let go (the pace counts from there)

        def flush():
            if steps:
                packet = {"train_id": train_id, "steps": steps[:], "losses": losses[:]}
                del steps[:], losses[:]
                emit("train_progress", packet)
            last[0] = clock()

        def on_step(step, loss):
            steps.append(step)
            losses.append(loss)
            now = clock()
            if deadline[1] is not None:  # time paused does not count
                deadline[0] += now - deadline[1]
                deadline[1] = None
            if now > deadline[0] and step < tr.steps:
                raise _TimeUp(
                    f"the training took longer than {max_seconds:g} s, the limit for one "
                    f"training; it stopped after {step:,} of {tr.steps:,} steps (fewer steps, "
                    "or a smaller batch, fit)"
                )
            pace = self.control.steps_per_second
            # a paced step is shown as soon as it is done: the class sees every one
            if pace is not None or now - last[0] >= flush_seconds:
                flush()
                if now - last[1] >= SNAPSHOT_SECONDS:
                    self.snapshot()
                    last[1] = clock()
            if pace is not None and step < tr.steps:
                pace_wait(pace)

        def pace_wait(pace):
            # the time between steps is the class's, not the machine's: it is not counted
            # against the time limit (as a pause is not)
            before = clock()
            due = released[0] + 1.0 / pace
            if due > before and self.control.wait(due - before):
                released[0] = due
            else:
                released[0] = clock()
            deadline[0] += clock() - before

        def on_pause():
            deadline[1] = clock()
            flush()
            self.snapshot()
            last[1] = clock()

        finished = {"train_id": train_id}
        try:
            status = tr.run(self.control, on_step, on_pause)
        except TrainingError as exc:
            status = "error"
            finished["error"] = str(exc)
            finished["node"] = exc.node
        except _TimeUp as exc:
            status = "error"
            finished["error"] = str(exc)
            finished["code"] = "time_limit"
        except Exception as exc:  # a bug of ours: report it and keep serving
            status = "error"
            finished["error"] = f"internal error: {type(exc).__name__}: {exc}"
        self._release()
        try:
            flush()
            self.snapshot()
            graph = tr.written_back().model_dump(mode="json")
        except Exception as exc:
            graph = None
            if status != "error":
                status = "error"
                finished["error"] = f"internal error: {type(exc).__name__}: {exc}"
        finished.update(status=status, steps=tr.step_count, loss=tr.loss, graph=graph)
        emit("train_finished", finished)


class TrainingManager:
    def __init__(self, socketio, runs):
        self.socketio, self.runs = socketio, runs
        self.settings = runs.settings
        self.queue = TrainingQueue(self.settings.max_trainings)
        self.sessions = {}  # sid -> its _Session in progress
        # mirror(sid, event, payload) after each packet; None: the run manager's, if it has one
        self.mirror = None

    def start(self, sid, request):
        """Validate and start a training; the ack: {"train_id"} or {"error", "node_errors"}."""
        graph, err = read_graph(request.graph, self.settings.limits)
        if err:
            return err
        doc = graph.doc  # the trainer writes the trained values back into it, modules and all
        try:
            settings = settings_for(doc, request.config)
            trainer = Trainer(
                doc,
                settings,
                limits=self.settings.limits,
                device=self.settings.device,
                validated=True,
            )
        except ValidationError as exc:
            return {"error": f"invalid training settings: {_pydantic(exc)}", "node_errors": []}
        except GraphInvalid as exc:
            return problems_reply(exc.problems)
        client = self.runs.client(sid)
        client.cancel_active()  # the run or training in progress
        train_id = uuid.uuid4().hex[:12]
        control = PacedControl(request.steps_per_second)
        session = _Session(self, sid, train_id, trainer, control, client)
        with client.lock:
            client.active = (train_id, control)
        with _LOCK:
            self.sessions[sid] = session
            _IN_PROGRESS[train_id] = session
        self.socketio.start_background_task(session.run)
        return {"train_id": train_id}

    def forget(self, session):
        with _LOCK:
            if self.sessions.get(session.sid) is session:
                del self.sessions[session.sid]
            _IN_PROGRESS.pop(session.train_id, None)

    def control(self, sid, request):
        with _LOCK:
            session = self.sessions.get(sid)
        if session is None or session.train_id != request.train_id or session.done:
            return {"error": f"no training {request.train_id} in progress"}
        if request.action == "pace":
            session.control.set_pace(request.steps_per_second)
        else:
            getattr(session.control, request.action)()
        return {"ok": True}


def register(socketio, runs, max_bytes):
    """The `train` and `train_control` events; the TrainingManager."""
    trainings = TrainingManager(socketio, runs)

    on_message(socketio, "train", TrainRequest, trainings.start, max_bytes)
    on_message(socketio, "train_control", TrainControlRequest, trainings.control, max_bytes)
    return trainings


def _pydantic(exc):
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors()[:10]
    )
