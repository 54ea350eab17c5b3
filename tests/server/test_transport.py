"""Frames the transport refuses (backend/server/transport.py), against a real server over a raw
Engine.IO websocket: binary attachments close the connection instead of being buffered, and
each refused frame logs one line, no traceback."""

import logging

import websocket
from test_limits import MiB, PeakRSS


def raw_socket(server):
    """A websocket spoken to by hand: Engine.IO open, then Socket.IO connect to "/"."""
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{server.port}/socket.io/?EIO=4&transport=websocket", timeout=5
    )
    assert ws.recv().startswith("0{")  # Engine.IO open
    ws.send('40{"wire":2}')  # a page announces the wire it reads (client_version.py)
    assert ws.recv().startswith("40{")  # Socket.IO connected
    return ws


def closed(ws):
    """Whether the server closed the connection (reading until it does, or 5 s)."""
    try:
        while True:
            frame = ws.recv()
            if frame in ("", b""):
                return True
            if frame == "2":
                ws.send("3")  # a ping, answered
    except (websocket.WebSocketConnectionClosedException, ConnectionError, OSError):
        return True
    except websocket.WebSocketTimeoutException:
        return False


def test_binary_attachments_close_the_connection_unbuffered(server, caplog):
    ws = raw_socket(server)
    blob = b"\x00" * (10 * MiB)
    sent = 0
    with caplog.at_level(logging.WARNING, logger="wiregrad.server"), PeakRSS() as mem:
        # a header announcing 30 attachments, then 10 MiB each
        ws.send(
            '4530-["run",' + ",".join(f'{{"_placeholder":true,"num":{i}}}' for i in range(30)) + "]"
        )
        try:
            for _ in range(30):
                ws.send_binary(blob)
                sent += 1
        except (websocket.WebSocketConnectionClosedException, ConnectionError, OSError):
            pass
        assert closed(ws)
    assert sent < 30 or mem.grew < 64 * MiB, (sent, mem.grew)  # 300 MB were kept before
    lines = [r for r in caplog.records if r.name == "wiregrad.server"]
    assert lines and "refused a binary event header" in lines[0].getMessage()
    assert all(r.exc_info is None for r in lines)
    assert server.healthy()


def test_a_bare_binary_frame_closes_the_connection(server, caplog):
    ws = raw_socket(server)
    with caplog.at_level(logging.WARNING, logger="wiregrad.server"):
        ws.send_binary(b"\x04" + b"x" * 1000)
        assert closed(ws)
    lines = [r for r in caplog.records if r.name == "wiregrad.server"]
    # one line for this frame (a line of the module's earlier test can arrive late beside it)
    mine = [
        r
        for r in lines
        if "refused a binary frame" in r.getMessage() and "1,001 bytes" in r.getMessage()
    ]
    assert len(mine) == 1, [r.getMessage() for r in lines]
    assert all(r.exc_info is None for r in lines)


def test_an_unparseable_frame_logs_one_line_and_the_connection_goes_on(server, caplog):
    ws = raw_socket(server)
    with caplog.at_level(logging.DEBUG):
        ws.send('42["run",{]')  # 13 bytes of broken JSON
        ws.send('421["tensor",{"run_id":"nope"}]')
        reply = ws.recv()
    while reply == "2":
        ws.send("3")
        reply = ws.recv()
    assert reply.startswith("431[") and "no finished run nope" in reply
    refused = [r for r in caplog.records if "refused a frame" in r.getMessage()]
    assert len(refused) == 1 and refused[0].exc_info is None
    assert not [r for r in caplog.records if r.exc_info]  # no traceback anywhere
    ws.close()
