"""The Socket.IO messages a client may send, as pydantic models (see docs/protocol.md).

Every message is validated here before anything acts on it; a message that does not fit gets
an error reply, and the connection and the server go on."""

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from ..graph.limits import StructureError, capped, check_message_lists
from . import fastjson

ID = r"^[A-Za-z0-9_.:-]{1,64}$"


class RunOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    use_cache: bool = True  # forward runs reuse unchanged nodes' values from earlier runs
    # teaching options of backward runs (docs/training.md): leaves start from the .grad of this
    # client's previous run of the same graph; backward called twice, retaining the graph or not;
    # backward from ones of the target's shape (a target that is not one number); and, for
    # forward and backward runs, the forward pass under no_grad
    accumulate_grad: bool = False
    backward_twice: bool = False
    retain_graph: bool = False
    gradient_ones: bool = False
    no_grad: bool = False


class RunEdit(BaseModel):
    """A run's graph as the graph of an earlier run of this client with some nodes replaced
    (their params, position or label edited; ids and ops as they were)."""

    model_config = ConfigDict(extra="forbid")
    base: str = Field(pattern=ID)  # the run whose graph is edited
    nodes: list[dict[str, Any]]


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    graph: dict[str, Any] | None = None
    edit: RunEdit | None = None  # instead of `graph`
    mode: Literal["forward", "backward"] = "forward"
    target: str | None = Field(default=None, pattern=ID)
    options: RunOptions = Field(default_factory=RunOptions)

    @model_validator(mode="after")
    def _one_graph(self):
        if (self.graph is None) == (self.edit is None):
            raise ValueError("give either graph or edit")
        return self


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
    # a page of the tensor: `count` elements from flat (row-major) index `offset`; without
    # either, the whole tensor when it fits in one page (docs/protocol.md, "tensor")
    offset: int | None = Field(default=None, ge=0, le=2**53)
    count: int | None = Field(default=None, ge=0, le=2**53)


# -- rooms (docs/training.md) -------------------------------------------------------------------
ROOM_CODE = r"^[A-Z2-9]{6}$"

# a room code as typed: surrounding spaces and lower case are forgiven
RoomCode = Annotated[
    str,
    BeforeValidator(lambda v: v.strip().upper() if isinstance(v, str) else v),
    Field(pattern=ROOM_CODE),
]


class RoomCreateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    graph: dict[str, Any] | None = None  # the room's first graph (else set by room_update)


class RoomJoinRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode


class RoomLeaveRequest(RoomJoinRequest):
    pass


class RoomResumeRequest(BaseModel):
    """The owner taking its room back after a reload or a dropped connection."""

    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    secret: str = Field(min_length=16, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")


class RoomUpdateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    graph: dict[str, Any]


class RoomStepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    # step mode's position in the last run's records; None: the owner left step mode
    index: int | None = Field(ge=0, le=100_000)


class RoomLessonRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    index: int = Field(ge=0, le=100_000)  # the lesson step shown (0: the first)


class RoomPaceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    # the owner's training pace (docs/training.md); None: as fast as the machine goes
    steps_per_second: float | None = Field(default=None, gt=0, le=1000)


class RoomSelectRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    edge: str | None = Field(default=None, max_length=200)  # the owner's selected edge


# predict, then reveal (backend/server/room_quiz.py)
class QuizTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # an edge's gradient, a node's value, a leaf's .grad, a node's total gradient
    kind: Literal["grad", "value", "leaf_grad", "node_grad"]
    id: str = Field(min_length=1, max_length=200)  # the edge's or node's id ("node.weight")
    label: str = Field(max_length=200)  # how the page names it, e.g. "the gradient on b → mean"


class QuizMistake(BaseModel):
    model_config = ConfigDict(extra="forbid")
    why: str = Field(min_length=1, max_length=300)
    value: Any  # nested lists of numbers, checked by room_quiz


class RoomAskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    target: QuizTarget
    question: str = Field(default="", max_length=300)
    names: bool = False  # answers are anonymous unless the teacher asks for names
    truth: Any  # the true value, a number or nested lists (kept from students until reveal)
    mistakes: list[QuizMistake] = Field(default_factory=list, max_length=8)


QuizId = Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")]


class RoomAnswerRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    quiz_id: QuizId
    answer: str = Field(max_length=2000)
    name: str | None = Field(default=None, max_length=60)
    token: str | None = Field(default=None, max_length=40, pattern=r"^[A-Za-z0-9_-]+$")


class RoomRevealRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: RoomCode
    quiz_id: QuizId


# -- training (docs/training.md) ----------------------------------------------------------------
class TrainRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    graph: dict[str, Any]
    # over graph.training; checked as backend.graph.document.TrainingSettings once merged
    config: dict[str, Any] | None = None
    # the pace a class can watch (docs/training.md); None: as fast as the machine goes
    steps_per_second: float | None = Field(default=None, gt=0, le=1000)


class TrainControlRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    train_id: str = Field(pattern=ID)
    action: Literal["pause", "resume", "stop", "pace"]
    # for "pace": the new pace (None: as fast as it goes); the other actions ignore it
    steps_per_second: float | None = Field(default=None, gt=0, le=1000)


def parse(model, data, max_bytes=None):
    """(message, None) or (None, error reply) for a client's payload."""
    if not isinstance(data, dict):
        return None, {"error": f"expected a JSON object, got {type(data).__name__}"}
    if max_bytes is not None:
        try:
            size = fastjson.encoded_size(data)
        except (ValueError, RecursionError):
            return None, {"error": "the message is not valid JSON (too deep, or NaN)"}
        if size > max_bytes:
            return None, {"error": f"the message has {size:,} bytes; the limit is {max_bytes:,}"}
    try:
        check_message_lists(data)  # before pydantic builds an error per item (limits.py)
    except StructureError as exc:
        return None, {"error": f"invalid {model.__name__}: {exc}"}
    try:
        return model.model_validate(data), None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'message'}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)[:10]
        )
        return None, {"error": capped(f"invalid {model.__name__}: {problems}")}
