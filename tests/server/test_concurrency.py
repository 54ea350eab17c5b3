"""Many clients at once: each runs its own graph and gets exactly its own results."""

import threading

from _server_helpers import connect, preview, times_k

N_CLIENTS = 20


def test_twenty_clients_run_different_graphs_at_once(server):
    clients = [connect(server.url) for _ in range(N_CLIENTS)]
    try:
        ks = [float(i + 2) for i in range(N_CLIENTS)]
        barrier = threading.Barrier(N_CLIENTS)
        run_ids = [[] for _ in clients]
        errors = []

        def work(i):
            try:
                c, k = clients[i], ks[i]
                barrier.wait(timeout=10)
                for round_ in range(3):  # three runs each, back to back
                    x = float(round_ + 1)
                    run_id, finished, records = c.run_to_end(times_k(k, x), "backward")
                    run_ids[i].append(run_id)
                    assert finished["status"] == "ok", finished
                    assert preview(records, "value", node="y") == x * k
                    assert preview(records, "leaf_grad", node="x", param=None) == k
                    assert preview(records, "edge_grad", edge="x-y-input") == k
                    got = c.call("tensor", {"run_id": run_id, "node": "y"})
                    assert got["values"] == x * k, got
            except Exception as exc:  # reported below, with the client's number
                errors.append((i, repr(exc)))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(N_CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        all_ids = [r for ids in run_ids for r in ids]
        assert len(all_ids) == len(set(all_ids)) == 3 * N_CLIENTS
        for c, own in zip(clients, run_ids):
            seen = {d["run_id"] for _, _, d in c.received}
            assert seen == set(own)  # its own run ids and no one else's
        # a client cannot fetch another's tensors
        other = run_ids[1][0]
        assert "error" in clients[0].call("tensor", {"run_id": other, "node": "y"})
    finally:
        for c in clients:
            c.client.disconnect()
    assert server.healthy()


def test_many_clients_connect_and_disconnect_while_others_run(server):
    steady = connect(server.url)
    try:
        stop = threading.Event()
        churn_errors = []

        def churn():
            while not stop.is_set():
                try:
                    c = connect(server.url)
                    c.run(times_k(3.0), "backward")
                    c.client.disconnect()  # while its run may still go on
                except Exception as exc:
                    churn_errors.append(repr(exc))

        threads = [threading.Thread(target=churn) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for k in range(2, 12):
                _, finished, records = steady.run_to_end(times_k(float(k)), "backward")
                assert finished["status"] == "ok"
                assert preview(records, "value", node="y") == 3.0 * k
        finally:
            stop.set()
            for t in threads:
                t.join(20)
        assert not churn_errors, churn_errors[:3]
    finally:
        steady.client.disconnect()
    assert server.healthy()
