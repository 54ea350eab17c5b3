"""Running a graph document on the engine, with a trace of every value and gradient.

`executor.py` is the entry point, `run` (and `run_records`), and the run's core; it hands out
to `plan.py` (what a run needs of a document that no value changes, kept across runs),
`forward_cache.py` (a forward run from the last one's values, where only some nodes changed),
`forward_paths.py` (each edge's own value and gradient where one output feeds several inputs),
`recorder.py` (the trace records as the run goes), `summary.py` and `records.py` (a tensor's
summary row, the tables a packet carries, the records a page reads), `backward_watch.py` (the
backward pass observed: each edge's gradient as the engine hands it out), `inplace.py`
(documents with in-place ops: statement order, versions), `errors.py` (how a run fails, in the
user's words), `snapshot.py` (a document's nodes as the last run saw them: edits and stale
values) and `autograd_view.py` (the engine's backward graph as the page draws it). The C
kernels `_observe` and `_tables` (in the graph package, built by setup.py) are the hot loops of
`backward_watch` and `summary`.

May import the engine (through `engine.watch` and PyTorch's names), the documents, the registry
and validation; never the export, the importer or the server."""
