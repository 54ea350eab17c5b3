"""The JSON every Socket.IO packet is read with: orjson, and the json module only for what
orjson declines but the json module reads (lone surrogates in strings). The json module is
held to orjson's rules, so a message cannot bring in NaN, Infinity or 1e999 (inf) through it:
none of them can be written back to JSON, and a saved graph would keep null."""

import pytest

from backend.server import fastjson

LONE = '"\\ud800"'  # a lone surrogate: orjson declines the text, the json module reads it


def test_what_only_the_json_module_reads_is_still_read():
    assert fastjson.loads(f'{{"a": [{LONE}, 1.5]}}') == {"a": ["\ud800", 1.5]}


@pytest.mark.parametrize(
    "text, said",
    [
        ("NaN", "NaN is not a JSON number"),
        ("Infinity", "Infinity is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
        ("1e999", "1e999 is too large for a number"),
        ("-1e999", "-1e999 is too large for a number"),
    ],
)
def test_numbers_json_cannot_hold_are_refused(text, said):
    for doc in (f"[{text}]", f"[{LONE}, {text}]"):
        with pytest.raises(ValueError, match=said):
            fastjson.loads(doc)


def test_nesting_too_deep_is_a_value_error():
    with pytest.raises(ValueError, match="nested too deeply"):
        fastjson.loads(f"[{LONE}, " + "[" * 100_000 + "]" * 100_000 + "]")


def test_a_packet_with_nan_runs_nothing_and_the_server_goes_on(server, sio_client):
    c = sio_client(server)
    # an integer past 64 bits makes the test client write its packet with the json module,
    # which writes NaN as NaN; the server cannot read that packet, so no handler runs and no
    # ack comes
    doc = {"nodes": [{"id": "x", "op": "tensor", "params": {"value": [float("nan"), 2**70]}}]}
    with pytest.raises(Exception, match="Timeout|timed out|^$"):
        c.call("run", {"graph": doc, "mode": "forward"}, timeout=2)
    assert c.received == []
    ack = c.call("run", {"graph": {"nodes": [], "edges": []}, "mode": "forward"})
    assert "run_id" in ack, ack


def test_a_messages_size_is_its_compact_json_in_bytes():
    """The size a message's cap is checked against (protocol.parse): UTF-8 bytes of compact
    JSON, and where orjson declines (a lone surrogate), the json module's escaped text."""
    assert fastjson.encoded_size({"a": [1, 2.5], "b": "x"}) == len('{"a":[1,2.5],"b":"x"}')
    assert fastjson.encoded_size({"name": "é"}) == len('{"name":"é"}'.encode())
    lone = fastjson.loads(f"[{LONE}]")
    assert fastjson.encoded_size(lone) == len('["\\ud800"]')


def test_a_message_over_its_cap_is_refused_with_its_size():
    from backend.server.protocol import CancelRequest, parse

    msg, err = parse(CancelRequest, {"run_id": "a" * 12, "pad": "é" * 600}, max_bytes=1000)
    size = len(('{"run_id":"' + "a" * 12 + '","pad":"' + "é" * 600 + '"}').encode())
    assert msg is None and err["error"] == f"the message has {size:,} bytes; the limit is 1,000"
    msg, err = parse(CancelRequest, {"run_id": "a" * 12}, max_bytes=1000)
    assert err is None and msg.run_id == "a" * 12
