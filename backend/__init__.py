"""Wiregrad's backend: graph documents (backend.graph) and, later, the server."""
