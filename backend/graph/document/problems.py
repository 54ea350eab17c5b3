"""What is wrong with a document: each finding tied to where it is, and the error that carries
them. Validation, module unpacking and training all report in these terms."""

from dataclasses import asdict, dataclass


@dataclass
class Problem:
    message: str
    node: str | None = None
    edge: str | None = None
    port: str | None = None
    param: str | None = None
    code: str | None = None  # for problems the editor offers a fix for: stale.STALE_VALUES

    def to_dict(self):
        return {k: v for k, v in asdict(self).items() if v is not None}


class GraphInvalid(ValueError):
    """A document that cannot run; `.problems` lists why, each tied to where it is."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__(
            "; ".join(
                (f"{p.node or p.edge}: " if p.node or p.edge else "") + p.message for p in problems
            )
        )
