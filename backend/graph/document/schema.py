"""Print the graph format's JSON Schema, as committed in docs/graph-format.schema.json.

Regenerate the file after changing the models in document.py:

    python -m backend.graph.document.schema > docs/graph-format.schema.json
"""

import json

from .format import json_schema


def render() -> str:
    """The schema as the committed file holds it: indent 2, a trailing newline."""
    return json.dumps(json_schema(), indent=2) + "\n"


def main() -> None:
    print(render(), end="")


if __name__ == "__main__":
    main()
