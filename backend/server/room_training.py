"""The owner's latest training as a room keeps it for late joiners.

A student who joins while (or after) the teacher trains should see the loss chart so far, the
step reached, the last parameters and the decision boundary, not an empty training tab. The
room is sent every `train_*` packet anyway (rooms.py `mirror`); this folds them into one
bounded state: the `train_started` payload, at most `max_points` loss points (the chart's
shape: when there are more, every other one is dropped and from then on only every second
step is kept, so the points stay evenly spread over the whole run; the latest point is always
there), the last `train_snapshot` as sent (one packet: its size is bounded by the tensor
preview limit and the boundary's resolution) and the `train_finished` payload without its
`graph` (the owner's page sends the trained graph to the room as an edit).
"""

MAX_POINTS = 1000


class TrainingRecord:
    def __init__(self, started, max_points=MAX_POINTS):
        self.started = started
        self.max_points = max(2, max_points)
        self.stride = 1  # the steps kept are the multiples of stride
        self.steps, self.losses = [], []
        self.latest = None  # (step, loss): the newest point, kept or not
        self.snapshot = None
        self.finished = None
        self.seq = 0  # the training's packets folded in after its start (room_delivery.py)

    @property
    def train_id(self):
        return self.started.get("train_id")

    def add(self, event, payload):
        """Fold in a packet of this training; False when it is not one of its packets."""
        if payload.get("train_id") != self.train_id:
            return False
        self.seq += 1
        if event == "train_progress":
            self._progress(payload.get("steps") or (), payload.get("losses") or ())
        elif event == "train_snapshot":
            self.snapshot = payload
        elif event == "train_finished":
            self.finished = {k: v for k, v in payload.items() if k != "graph"}
        return True

    def _progress(self, steps, losses):
        for step, loss in zip(steps, losses, strict=False):
            self.latest = (step, loss)
            if step % self.stride and self.steps:  # (the first point stays: where it began)
                continue
            self.steps.append(step)
            self.losses.append(loss)
            if len(self.steps) > self.max_points:
                self.stride *= 2
                kept = [i for i, s in enumerate(self.steps) if i == 0 or s % self.stride == 0]
                self.steps = [self.steps[i] for i in kept]
                self.losses = [self.losses[i] for i in kept]

    def to_json(self):
        """What a joiner's ack carries as `training` (docs/training.md)."""
        steps, losses = list(self.steps), list(self.losses)
        if self.latest is not None and (not steps or steps[-1] != self.latest[0]):
            steps.append(self.latest[0])
            losses.append(self.latest[1])
        return {
            "train_id": self.train_id,
            "steps": self.started.get("steps"),
            "params": self.started.get("params"),
            "status": "running" if self.finished is None else self.finished.get("status"),
            "progress": {"steps": steps, "losses": losses},
            "snapshot": self.snapshot,
            "finished": self.finished,
            "seq": self.seq,
        }
