"""Graph documents: what a graph is, before anything runs it.

    format.py          the document's pydantic models (nodes, edges, modules, training, lessons)
                       and `parse`: structure only (types, ids, required keys)
    schema.py          the format's JSON Schema (`python -m backend.graph.document.schema`)
    problems.py        Problem (one finding tied to a node, edge, port or param), GraphInvalid
    validate.py        every problem of a document at once: structure, then shapes by a dry run
    modules.py         module definitions (named subgraphs) and their instances, unpacked
    module_library.py  ready module definitions built from constructor arguments
    stale.py           trained values that no longer fit their node
    index.py           a valid document indexed for the executor's and exporter's walks
    snapshot.py        a document's nodes as the last run saw them: edits, what changed
    templates.py       the ready-made documents of templates/ (package data)

May import the engine (validation's dry run), the registry, op_context and limits; never running,
export, importing, tracing or the server.
"""
