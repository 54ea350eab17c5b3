"""The Wiregrad server: Flask for the JSON API and the built editor, Flask-SocketIO for runs."""

from .app import create_app
from .config import Settings

__all__ = ["Settings", "create_app"]
