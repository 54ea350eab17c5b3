"""The Socket.IO messages a client may send, as pydantic models (see docs/protocol.md).

Every message is validated here before anything acts on it; a message that does not fit gets
an error reply, and the connection and the server go on."""

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

ID = r"^[A-Za-z0-9_.:-]{1,64}$"


class RunOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    use_cache: bool = True  # forward runs reuse unchanged nodes' values from earlier runs


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    graph: dict[str, Any]
    mode: Literal["forward", "backward"] = "forward"
    target: str | None = Field(default=None, pattern=ID)
    options: RunOptions = Field(default_factory=RunOptions)


class CancelRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run_id: str = Field(pattern=ID)


class TensorRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run_id: str = Field(pattern=ID)
    node: str | None = Field(default=None, pattern=ID)
    edge: str | None = Field(default=None, pattern=ID)
    param: Literal["weight", "bias"] | None = None  # a linear node's own parameter
    kind: Literal["value", "grad"] = "value"


def parse(model, data, max_bytes=None):
    """(message, None) or (None, error reply) for a client's payload."""
    if not isinstance(data, dict):
        return None, {"error": f"expected a JSON object, got {type(data).__name__}"}
    if max_bytes is not None:
        try:
            size = len(json.dumps(data, separators=(",", ":")))
        except (ValueError, RecursionError):
            return None, {"error": "the message is not valid JSON (too deep, or NaN)"}
        if size > max_bytes:
            return None, {"error": f"the message has {size:,} bytes; the limit is {max_bytes:,}"}
    try:
        return model.model_validate(data), None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'message'}: {e['msg']}"
            for e in exc.errors()[:10]
        )
        return None, {"error": f"invalid {model.__name__}: {problems}"}
