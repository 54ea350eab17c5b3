"""A document the server refuses is explained in pydantic's words without its links: the
editor shows the message as it comes (Upload JSON), and a URL line is noise there."""

import pytest
import requests


@pytest.mark.parametrize(
    "body, said",
    [
        ({"nodes": 3}, "Input should be a valid list"),
        ({"nodes": [{"id": "a"}]}, "Field required"),
        ({"nodes": [], "edges": "x", "surprise": 1}, "Extra inputs are not permitted"),
    ],
)
def test_refused_documents_say_why_without_pydantics_links(server, body, said):
    for path in ("/validate", "/graphs"):
        r = requests.post(server.api(path), json=body)
        assert r.status_code == 400, r.text[:300]
        error = r.json()["error"]
        assert error.startswith("invalid graph document: "), error
        assert said in error, error
        assert "errors.pydantic.dev" not in error and "further information" not in error, error
