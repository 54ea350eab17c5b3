"""Rate limits per client: token buckets, and the gate in front of Socket.IO's costly events.

A bucket holds up to `burst` tokens and refills at `rate` a second; each event takes one, and
an event that finds it empty is refused with the time to wait. Buckets are per process (a
client stays on one process behind sticky sessions), kept in one dict that forgets full
buckets when it grows, so a client that comes and goes leaves nothing behind for long.
"""

import threading
import time

RATE_LIMITED = "rate_limited"

# the events a client can make the server work for; each client has one bucket for all of them
COSTLY_EVENTS = (
    "run",
    "tensor",
    "train",
    "train_control",
    "room_create",
    "room_update",
    "room_step",
    "room_lesson",
    "room_pace",
    "room_select",
    "room_ask",
    "room_answer",
    "room_reveal",
    "room_quiz_end",
    "room_quiz_csv",
    "room_quiz_spread",
)


class RateLimiter:
    def __init__(self, max_keys=50_000):
        self.buckets = {}  # key -> [tokens, last refill time, rate, burst]
        self.lock = threading.Lock()
        self.max_keys = max_keys

    def take(self, key, rate, burst):
        """Take one token from `key`'s bucket: 0.0 when there was one, else the seconds until
        there is."""
        now = time.monotonic()
        with self.lock:
            b = self.buckets.get(key)
            if b is None:
                if len(self.buckets) >= self.max_keys:
                    self._forget_full(now)
                b = self.buckets[key] = [float(burst), now, rate, burst]
            tokens = min(burst, b[0] + (now - b[1]) * rate)
            b[1] = now
            if tokens >= 1.0:
                b[0] = tokens - 1.0
                return 0.0
            b[0] = tokens
            return (1.0 - tokens) / rate

    def give_back(self, key):
        """Return the token an event took (it turned out not to count)."""
        with self.lock:
            b = self.buckets.get(key)
            if b is not None:
                b[0] = min(b[3], b[0] + 1.0)

    def _forget_full(self, now):
        full = [
            k
            for k, (tokens, last, rate, burst) in self.buckets.items()
            if tokens + (now - last) * rate >= burst
        ]
        for k in full:
            del self.buckets[k]


def refusal(what, limit, wait):
    """The ack for a refused event, in the user's words."""
    return {
        "error": f"too many {what}: at most {limit}; try again in {max(wait, 0.1):.1f} s",
        "code": RATE_LIMITED,
        "retry_after": round(max(wait, 0.1), 1),
    }


def gate_costly_events(socketio, limiter, settings):
    """Put a rate check in front of the handlers of COSTLY_EVENTS, at python-socketio's handler
    table (after every handler is registered), so a flood is refused before its payload is
    read as a message. One bucket per client for them all."""
    handlers = socketio.server.handlers.get("/", {})
    rate, burst = settings.events_per_second, settings.events_burst
    limit = f"{rate:g} requests a second (bursts of {burst})"

    def gated(event, handler):
        def check(sid, *args):
            wait = limiter.take(("events", sid), rate, burst)
            if wait:
                return refusal("requests", limit, wait)
            return handler(sid, *args)

        return check

    for event in COSTLY_EVENTS:
        if event in handlers:
            handlers[event] = gated(event, handlers[event])


class JoinGate:
    """Room joins and resumes: each client may try `joins_per_minute`, and each address may
    fail (a code that is no room, a wrong secret) `failed_joins_per_minute` times, so room codes
    (30 bits) cannot be tried faster than that from one machine, however many connections it
    opens. Behind a proxy every client has the proxy's address: raise the second limit there
    (docs/deployment.md)."""

    def __init__(self, limiter, settings):
        self.limiter = limiter
        self.per_client = settings.joins_per_minute
        self.per_address = settings.failed_joins_per_minute

    def __call__(self, sid, act):
        from flask import request

        n = self.per_client
        wait = self.limiter.take(("joins", sid), n / 60.0, n)
        if wait:
            return refusal("room joins", f"{n} a minute", wait)
        address = ("failed joins", request.remote_addr)
        m = self.per_address
        wait = self.limiter.take(address, m / 60.0, m)
        if wait:
            return refusal("wrong room codes from your address", f"{m} a minute", wait)
        ack = act()
        if "error" not in ack:
            self.limiter.give_back(address)  # only failures count against the address
        return ack
