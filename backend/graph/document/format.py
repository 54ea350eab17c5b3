"""The graph document: JSON, versioned, validated by these pydantic models.

The models check the document's structure only (types, ids, required keys). Whether a graph can
run (known ops and ports, params in range, no cycles, shapes that fit) is `validate.py`'s job,
so that every problem is reported at once, tied to its node or edge.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from ..limits import capped, check_document_lists

FORMAT = "wiregrad.graph"
VERSION = 2  # 2 added `modules`; a version 1 document (without them) still loads as it is
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
MODULE_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"  # a Python class name: how export writes it


class Position(BaseModel):
    # finite: a JSON document cannot hold inf (a store would write it back as null)
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    x: float = 0.0
    y: float = 0.0


class Node(BaseModel):
    """One operation (or source) on the canvas."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=ID_PATTERN, description="unique within the graph")
    op: str = Field(max_length=64, description="an op name from the registry, e.g. 'add'")
    params: dict[str, Any] = Field(default_factory=dict)
    position: Position = Field(default_factory=Position)
    label: str | None = Field(default=None, max_length=200, description="shown instead of op")


class Edge(BaseModel):
    """Carries the output `sourcePort` of `source` into the input `targetPort` of `target`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    id: str = Field(pattern=ID_PATTERN)
    source: str = Field(pattern=ID_PATTERN)
    sourcePort: str = Field(default="out", max_length=64)  # noqa: N815 - the JSON's own key
    target: str = Field(pattern=ID_PATTERN)
    targetPort: str = Field(max_length=64)  # noqa: N815


class StepOptions(BaseModel):
    """Run options a lesson step runs with (docs/protocol.md: the teaching options of `run`)."""

    model_config = ConfigDict(extra="forbid")
    accumulate_grad: bool = False
    backward_twice: bool = False
    retain_graph: bool = False
    gradient_ones: bool = False
    no_grad: bool = False


class LessonPredict(BaseModel):
    """A lesson step's question to a room (predict, then reveal: docs/training.md): asked when
    the room's owner reaches the step, after the step's run, about one number of that run.
    Names no id that must exist: a lesson outlives edits, and a step whose edge or node is gone
    asks nothing (the page says so to the teacher)."""

    model_config = ConfigDict(extra="forbid")
    edge: str | None = Field(
        default=None, pattern=ID_PATTERN, description="an edge: its gradient, or its value"
    )
    # (`lin.weight`: a layer's parameter, for its .grad)
    node: str | None = Field(
        default=None, pattern=ID_PATTERN, description="a node: its value, or its gradient"
    )
    what: Literal["value", "grad"] = "grad"
    prompt: str = Field(default="", max_length=300, description="the question in words")

    @model_validator(mode="after")
    def _one_target(self):
        if (self.edge is None) == (self.node is None):
            raise ValueError("a lesson step's predict names exactly one of edge and node")
        return self


class LessonStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=4000)
    select: list[str] = Field(default_factory=list)
    run: Literal["forward", "backward", "train"] | None = None
    options: StepOptions | None = Field(
        default=None, description="the step's run options (null: the editor's own)"
    )
    predict: LessonPredict | None = Field(
        default=None, description="a question to the room at this step (null: none)"
    )


class TrainingSettings(BaseModel):
    """How the document trains (docs/training.md): minimise `loss` by `optimizer`."""

    model_config = ConfigDict(extra="forbid")
    loss: str = Field(pattern=ID_PATTERN, description="the scalar node to minimise")
    output: str | None = Field(
        default=None,
        pattern=ID_PATTERN,
        description="the model's prediction, for the decision boundary (null: the node wired "
        "into the loss node's input)",
    )
    optimizer: Literal["sgd", "adam"] = "adam"
    lr: float = Field(default=0.01, gt=0, le=10)
    momentum: float = Field(default=0.0, ge=0, lt=1, description="sgd only")
    steps: int = Field(default=500, ge=1, le=100_000)
    batch_size: int = Field(default=0, ge=0, le=100_000, description="0: the whole dataset")
    seed: int = Field(default=0, ge=0, le=2**31 - 1, description="seeds the minibatch order")


class ModuleDef(BaseModel):
    """A subgraph used as a node (modules.py): like an nn.Module class, defined once."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=MODULE_NAME, description="the class name in exported code")
    doc: str = Field(default="", max_length=2000)
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    inputs: list[str] = Field(
        default_factory=list, description="ids of its module_input nodes, in forward's order"
    )
    outputs: list[str] = Field(
        default_factory=list, description="ids of its module_output nodes, in forward's order"
    )


class GraphDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal["wiregrad.graph"] = FORMAT
    version: Literal[1, 2] = 1
    name: str = Field(default="untitled", max_length=200)
    description: str = Field(default="", max_length=10000)
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    target: str | None = Field(default=None, description="the scalar node backward starts from")
    lesson: list[LessonStep] = Field(default_factory=list)
    training: TrainingSettings | None = None
    modules: list[ModuleDef] = Field(
        default_factory=list, description="subgraphs used as nodes (op `module`); version 2"
    )
    # True on a document snapshot.edit_nodes made: its nodes that are an earlier document's
    # own objects are as they were (not part of the JSON)
    _edit: bool = PrivateAttr(default=False)
    # each node id's index in `nodes`, made by snapshot.edit_nodes and handed on to the
    # documents it makes from this one (their ids are where these are); checked at each use
    _positions: dict | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _modules_need_version_2(self):
        if self.modules and self.version < 2:
            raise ValueError("modules need a document of version 2 (this one says version 1)")
        return self

    def node(self, node_id):
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)


def parse(data) -> GraphDocument:
    """A GraphDocument from a dict or a JSON string; pydantic.ValidationError when malformed."""
    if isinstance(data, (str, bytes)):
        return GraphDocument.model_validate_json(data)
    check_document_lists(data)  # before pydantic builds an error per item (limits.py)
    return GraphDocument.model_validate(data)


def invalid_text(exc, max_lines=6) -> str:
    """A document's validation error for people: pydantic's first lines, joined, without its
    "For further information visit <url>" lines (a link into pydantic's docs means nothing to
    someone who drew a graph)."""
    lines = [ln for ln in str(exc).splitlines() if not ln.lstrip().startswith("For further")]
    return capped(" ".join(lines[:max_lines]))


def json_schema() -> dict:
    """The JSON Schema of the format, generated from the models (committed as
    docs/graph-format.schema.json and checked by a test)."""
    schema = GraphDocument.model_json_schema()
    schema["$id"] = "https://wiregrad.dev/schemas/graph-v2.json"
    schema["title"] = "Wiregrad graph document, versions 1 and 2 (modules)"
    return schema
