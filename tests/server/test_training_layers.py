"""The model-layer templates trained over a real Socket.IO connection: the LeNet template on
digits reaches 95% training accuracy (the snapshots' `accuracy`, what the training tab shows),
and `train_finished` carries every layer's trained state, from which the next run starts."""

import numpy as np
from test_training_socket import finished, packets, train, trainer_client, xor_mlp

from backend.graph import parse, run_records
from backend.graph.document.templates import load_template
from backend.graph.running.trainer import Trainer


def test_lenet_template_trains_to_95_percent_through_the_server(server, sio_client):
    c = trainer_client(server, sio_client)
    doc = load_template("lenet-digits").model_dump(mode="json")
    train_id = train(c, doc)
    done = finished(c, train_id, timeout=120)
    assert done["status"] == "ok" and done["steps"] == doc["training"]["steps"]
    started = packets(c, train_id, "train_started")[0][2]
    assert started["params"][:2] == ["conv1.weight", "conv1.bias"]
    snaps = [d for _, _, d in packets(c, train_id, "train_snapshot")]
    assert snaps[-1]["step"] == doc["training"]["steps"]
    assert snaps[-1]["accuracy"] >= 0.95
    assert "boundary" not in snaps[-1]  # images are not 2-D points
    assert snaps[-1]["params"]["conv1.weight"]["shape"] == [8, 1, 3, 3]
    # the trained document: the same accuracy, and its next run starts from the trained state
    back = parse(done["graph"])
    assert np.asarray(back.node("conv2").params["weight"]).shape == (16, 8, 3, 3)
    local = Trainer(back)
    assert local.accuracy() == snaps[-1]["accuracy"]
    res, _ = run_records(back, "forward")
    np.testing.assert_allclose(res.values["loss"].item(), local.evaluate(), rtol=1e-6)


def test_snapshots_of_a_regression_have_no_accuracy(server, sio_client):
    c = trainer_client(server, sio_client)
    train_id = train(c, xor_mlp(steps=20))
    finished(c, train_id)
    snap = packets(c, train_id, "train_snapshot")[-1][2]
    assert "accuracy" not in snap  # one float column of 0/1 labels: not class indices
