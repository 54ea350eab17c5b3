"""The editor's page as one script, built by `make widget` into `static/widget.js`: what the
notebook widget loads and what an exported HTML view embeds."""

from pathlib import Path

WIDGET_JS = Path(__file__).parent / "static" / "widget.js"


def built():
    """The path of the built page; a clear error when it was never built."""
    if not WIDGET_JS.is_file():
        raise FileNotFoundError(f"the widget's page is not built ({WIDGET_JS}): run `make widget`")
    return WIDGET_JS
