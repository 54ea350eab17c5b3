"""What an import reports: an ImportProblem per line that cannot be read (in the user's words),
ImportFailed holding them, and Unsupported, which a reader raises for the line it is reading
(the statement walker turns it into that line's problem and reads on)."""

from dataclasses import dataclass


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
    """The script cannot be read as a graph; `.problems` lists each line that failed and why."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


class Unsupported(Exception):
    """One line cannot be read; the message says why."""


def number_problem(exc):
    """The message for an OverflowError / ValueError met while reading a number."""
    if isinstance(exc, OverflowError) or "integer string conversion" in str(exc):
        return "a number is too large for a tensor (at most about 1.8e308)"
    return f"a value cannot be read: {str(exc)[:200]}"
