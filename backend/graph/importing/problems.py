"""What an import reports: an ImportProblem per line that cannot be read (in the user's words),
ImportFailed holding them, and Unsupported, which a reader raises for the line it is reading
(the statement walker turns it into that line's problem and reads on)."""

from dataclasses import dataclass

from ..registry import Unsupported  # noqa: F401 - a call form's refusal is a line's problem too


@dataclass
class ImportProblem:
    line: int
    message: str
    code: str = ""

    def to_dict(self):
        return {"line": self.line, "message": self.message, "code": self.code}

    def __str__(self):
        return f"line {self.line}: {self.message}" + (f"  [{self.code}]" if self.code else "")


class ImportFailed(ValueError):
    """The script cannot be read as a graph; `.problems` lists each line that failed and why.
    `.document`: the document of the lines that could be read (the rest of the script without
    the lines that failed and those that use what they made), where it is a valid one; None
    where there is none (a syntax error, the time budget, no valid graph)."""

    def __init__(self, problems, document=None):
        self.problems = list(problems)
        self.document = document
        super().__init__("; ".join(str(p) for p in self.problems))


class GraphTooBig(ImportFailed):
    """The script makes more nodes or edges than a document may hold (a loop says so at its
    own line: loops.py)."""


def number_problem(exc):
    """The message for an OverflowError / ValueError met while reading a number."""
    if isinstance(exc, OverflowError) or "integer string conversion" in str(exc):
        return "a number is too large for a tensor (at most about 1.8e308)"
    return f"a value cannot be read: {str(exc)[:200]}"
