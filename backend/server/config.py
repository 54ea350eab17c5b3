"""Server settings: one object built from the command line (or tests), passed everywhere."""

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..graph.limits import Limits


def default_data_dir() -> Path:
    """A per-user data directory: $WIREGRAD_DATA, else $XDG_DATA_HOME/wiregrad, else
    ~/.local/share/wiregrad."""
    if os.environ.get("WIREGRAD_DATA"):
        return Path(os.environ["WIREGRAD_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "wiregrad"


def _memory_bytes():
    """This machine's physical memory (8 GiB where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 1024**3


@dataclass
class Settings:
    host: str = "127.0.0.1"
    port: int = 5000
    data_dir: Path = field(default_factory=default_data_dir)
    device: str = "cpu"
    allowed_origins: list[str] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)
    max_message_bytes: int = 8 * 1024 * 1024  # one Socket.IO message or API body
    max_runs_kept: int = 8  # per client: recent runs whose tensors can still be fetched
    max_kept_bytes: int = 1024**3  # per client: those runs' tensors together (oldest go first)
    # all clients' kept runs together (oldest go first, whoever's): a quarter of the memory
    max_kept_bytes_total: int = field(default_factory=lambda: _memory_bytes() // 4)
    # trainings computing at once; more wait in a queue and are told their place
    max_trainings: int = field(default_factory=lambda: max(2, os.cpu_count() or 2))
    # scripts read at once, each in a child process of at most this much more memory
    max_imports: int = field(default_factory=lambda: max(1, (os.cpu_count() or 2) // 2))
    max_import_bytes: int = 512 * 1024**2
    max_tensor_page: int = 262_144  # elements in one `tensor` answer (the viewer asks a slice)
    flush_seconds: float = 0.05  # trace records go out at least this often while a run goes on
    max_records_per_packet: int = 2000
    flush_rows: int = 512  # ...and at once when they stand for this many nodes' or edges' records
    frontend_dir: Path | None = None  # the built editor; None: frontend/dist beside the package
    # -- who may do what, and how much (backend/server/auth.py, ratelimit.py; docs/deployment.md)
    # the teacher's secret: None on loopback (everyone may do everything, as one person's
    # server); `wiregrad serve` beyond loopback makes one (or takes --token / $WIREGRAD_TOKEN)
    teacher_token: str | None = None
    allowed_hosts: list[str] = field(default_factory=list)  # Host names besides loopback/bound
    joins_per_minute: int = 20  # room joins and resumes per client
    failed_joins_per_minute: int = 30  # joins with a wrong code per client address
    events_per_second: float = 50.0  # run/train/tensor/room_* per client, sustained
    events_burst: int = 100  # ... and at once
    max_connections: int = 1000  # Socket.IO connections one process takes
    request_timeout: float = 30.0  # seconds a half-sent HTTP request may wait between reads
    room_grace_seconds: float = 60.0  # a room whose owner dropped waits this long for it
    message_queue: str | None = None  # redis://HOST:PORT/N: rooms and packets across processes

    def origins(self):
        """Origins Socket.IO and the API accept: the server's own, plus the allowed ones."""
        own = {
            f"http://{self.host}:{self.port}",
            f"http://localhost:{self.port}",
            f"http://127.0.0.1:{self.port}",
        }
        return sorted(own | set(self.allowed_origins))
