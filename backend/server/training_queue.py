"""At most `slots` trainings compute at once on a server; the others wait their turn in order.

A training is minutes of every core it can get (Limits.max_train_seconds bounds one, not how
many): thirty students pressing Train at once would each get a thirtieth of the machine and
all hit the time limit. So a training past the slots waits, first come first served, and its
client is told its place (`train_queued {train_id, position, running}`, again each time the
place changes); a stop while waiting ends it without a step. The wait does not count toward
the training's time limit.
"""

import threading

POLL_SECONDS = 0.2  # how often a waiting training looks whether it was stopped


class TrainingQueue:
    def __init__(self, slots):
        self.slots = max(1, int(slots))
        self.running = 0
        self.waiting = []  # tickets, in order of arrival
        self.cond = threading.Condition()

    def enter(self, stopped, on_position):
        """Wait for a slot: True once this training holds one (call `leave` after), False
        when `stopped()` became true while it waited. `on_position(position, running)` is
        called (without the lock) when the training must wait, and each time its place
        changes; position 1 is next."""
        ticket = object()
        told = None
        with self.cond:
            self.waiting.append(ticket)
        try:
            while True:
                with self.cond:
                    place = self.waiting.index(ticket)
                    if place == 0 and self.running < self.slots:
                        self.waiting.pop(0)
                        self.running += 1
                        self.cond.notify_all()
                        return True
                    if place != told:
                        told, running = place, self.running
                    else:
                        running = None
                        if stopped():
                            return False
                        self.cond.wait(POLL_SECONDS)
                        continue
                if stopped():
                    return False
                on_position(place + 1, running)
        finally:
            with self.cond:
                if ticket in self.waiting:
                    self.waiting.remove(ticket)
                    self.cond.notify_all()

    def leave(self):
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def queued(self):
        with self.cond:
            return len(self.waiting)
