"""Trained weights in a `.safetensors` file beside the exported script (export/sidecar.py): a
graph that stores more than INLINE_LIMIT numbers no seed gives exports as a short script and
the file it loads. The script, run by PyTorch (and the engine) from a folder holding both,
prints the editor's loss and gradients; it is ruff-clean; it imports back, given the file, as
the same document as the script with every value inline; without the file the import names
the line that loads it. A few edited numbers stay in the script."""

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _docs import edge, node
from _printout import printed
from test_export_style import _ruff as ruff

from backend import cli
from backend.graph import parse
from backend.graph.document.templates import load_template
from backend.graph.export import export_python, to_python
from backend.graph.export.sidecar import INLINE_LIMIT, NAME
from backend.graph.importing.importer import ImportFailed, from_python
from backend.graph.running.executor import run_records
from backend.graph.running.trainer import Trainer

ROOT = Path(__file__).parents[2]


def _trained(doc, steps):
    doc = doc.model_copy(update={"training": doc.training.model_copy(update={"steps": steps})})
    trainer = Trainer(doc)
    assert trainer.run() == "ok"
    return trainer.written_back()


@pytest.fixture(scope="module")
def lenet():
    return _trained(load_template("lenet-digits"), 2)


def _module_doc():
    """Block (linear 16 -> 16 times a parameter of its own, tanh) twice, the second with a seed
    of its own, between a linear in and a linear head; trained, the instances hold their own
    values (their `state`) and the definition keeps its edited parameter."""
    block = {
        "name": "Block",
        "nodes": [
            node("x", "module_input"),
            node("fc", "linear", out_features=16, seed=1),
            node("s", "parameter", value=[0.5] * 16),
            node("m", "mul"),
            node("h", "tanh"),
            node("y", "module_output"),
        ],
        "edges": [
            edge("a", "x", "fc"),
            edge("b", "fc", "m"),
            edge("c", "s", "m", "other"),
            edge("d", "m", "h"),
            edge("e", "h", "y"),
        ],
        "inputs": ["x"],
        "outputs": ["y"],
    }
    training = {"loss": "loss", "optimizer": "adam", "lr": 0.02, "steps": 3, "batch_size": 16}
    return parse(
        {
            "version": 2,
            "modules": [block],
            "nodes": [
                node("data", "dataset", kind="moons", n=40, noise=0.1, seed=3),
                node("lab", "labels"),
                node("inp", "linear", out_features=16, seed=7),
                node("b1", "module", module="Block"),
                node("b2", "module", module="Block", seed=5),
                node("head", "linear", out_features=1, seed=9),
                node("loss", "mse_loss"),
            ],
            "edges": [
                edge("e1", "data", "inp"),
                edge("e2", "inp", "b1", "x"),
                edge("e3", "b1", "b2", "x", source_port="y"),
                edge("e4", "b2", "head", source_port="y"),
                edge("e5", "head", "loss"),
                edge("e6", "data", "lab", "dataset"),
                edge("e7", "lab", "loss", "target"),
            ],
            "target": "loss",
            "training": training,
        }
    )


def _leaf_doc(n):
    """A flat lesson graph: x @ w, w a parameter of n x 2 edited values (0.25 steps, exact in
    float32), summed."""
    w = [[0.25 * ((i + j) % 7) for j in range(2)] for i in range(n)]
    return parse(
        {
            "nodes": [
                node("x", "tensor", value=[[1.0] * n]),
                node("w", "parameter", value=w),
                node("y", "matmul"),
                node("loss", "sum"),
            ],
            "edges": [edge("e1", "x", "y"), edge("e2", "w", "y", "other"), edge("e3", "y", "loss")],
            "target": "loss",
        }
    )


def _in_folder(tmp_path, out, name="graph"):
    """The script and its weights written into a folder of their own; the script's path."""
    folder = tmp_path / name
    folder.mkdir()
    written = out.write(folder / f"{name}.py")
    assert [p.name for p in written] == [f"{name}.py", f"{name}.safetensors"]
    return written[0]


def _run(script):
    """The script run where it is (an engine script finds `engine` through PYTHONPATH): what
    it printed, {(kind, key): value} of its trace lines."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, script.name],
        cwd=script.parent,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return printed(proc.stdout)


def _ruff_clean(text):
    for args in (["check", "--output-format=concise"], ["format", "--check"]):
        proc = ruff(*args, source=text)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def _same_as_inline(doc, out, flavor, **kw):
    """The script read back with its file is the document its all-inline export reads back
    as (and that one is the exported document: test_export_import.py)."""
    back = from_python(out.text, weights=out.weights)
    inline = from_python(to_python(doc, flavor, **kw))
    assert back.model_dump(mode="json") == inline.model_dump(mode="json")
    return back


def _compare(got, doc):
    """The script's loss and every parameter's gradient are the engine's run of `doc`."""
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    np.testing.assert_allclose(got[("value", "loss")], res.values["loss"].item(), rtol=1e-5)
    assert res.leaf_grads
    for key, want in res.leaf_grads.items():
        np.testing.assert_allclose(
            np.asarray(got[("grad", key)]), want.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=key
        )


def _load_line(text):
    """The number of the line that loads the weights file."""
    return next(i for i, s in enumerate(text.splitlines(), 1) if s.startswith(f"{NAME} = load"))


@pytest.mark.parametrize("flavor", ["torch", "engine"])
def test_a_trained_lenet_loads_its_weights_from_the_file_beside_it(lenet, tmp_path, flavor):
    out = export_python(lenet, flavor, training=False, trace=True)
    # the model's state_dict names, each tensor the graph's stored values bit for bit
    layers = {n.id: n.params for n in lenet.nodes if n.op in ("conv2d", "linear")}
    assert sorted(out.tensors) == sorted(f"{n}.{a}" for n in layers for a in ("weight", "bias"))
    for nid, p in layers.items():
        for attr, param in (("weight", "weight"), ("bias", "bias_value")):
            have = out.tensors[f"{nid}.{attr}"]
            assert have.dtype == np.float32
            assert (have == np.asarray(p[param], dtype=np.float32)).all()
    inline = to_python(lenet, flavor, training=False, trace=True)
    assert len(out.text) < len(inline) / 10
    said = out.text.split('\n"""\n', 1)[0].replace("\n", " ")
    assert "starts from the weights the graph stores" in said
    assert "graph.safetensors), which must sit beside it" in said
    assert ".safetensors file" in out.text and f"{NAME} = load_" in out.text
    _ruff_clean(out.text)
    _compare(_run(_in_folder(tmp_path, out)), lenet)
    _same_as_inline(lenet, out, flavor, training=False, trace=True)


@pytest.mark.parametrize("template", ["residual-block-digits", "transformer-block"])
def test_batch_norm_statistics_and_attention_weights_load_from_the_file(template, tmp_path):
    # batch_norm's running statistics (buffers), MultiheadAttention's in_proj and out_proj
    doc = _trained(load_template(template), 2)
    out = export_python(doc, "torch", training=False, trace=True)
    names = set(out.tensors)
    if template == "residual-block-digits":
        assert any(k.endswith(".running_mean") for k in names)
    else:
        assert any(k.endswith(".in_proj_weight") for k in names)
        assert any(k.endswith(".out_proj.weight") for k in names)
    _compare(_run(_in_folder(tmp_path, out)), doc)
    _same_as_inline(doc, out, "torch", training=False, trace=True)


def test_the_plain_script_with_its_training_loop_reads_back_with_the_file(lenet):
    out = export_python(lenet, "torch")
    assert out.weights is not None and "for step in range" in out.text
    _ruff_clean(out.text)
    back = _same_as_inline(lenet, out, "torch")
    assert back.training == lenet.training


def test_trained_module_instances_load_their_own_values(tmp_path):
    doc = _trained(_module_doc(), 3)
    out = export_python(doc, "torch", training=False, trace=True)
    # the definition's own parameter under its class, each instance's values under its path
    assert "Block.s" in out.tensors
    assert {"b1.fc.weight", "b2.fc.weight", "b2.s", "inp_layer.weight"} <= set(out.tensors)
    assert 'nn.Parameter(state_dict["Block.s"].clone())' in out.text
    assert 'b2.s.copy_(state_dict["b2.s"])' in out.text
    _ruff_clean(out.text)
    _compare(_run(_in_folder(tmp_path, out)), doc)
    _same_as_inline(doc, out, "torch", training=False, trace=True)


@pytest.mark.parametrize("flavor", ["torch", "engine"])
def test_a_large_edited_leaf_is_loaded_a_small_one_stays_in_the_script(tmp_path, flavor):
    big = _leaf_doc(INLINE_LIMIT)
    out = export_python(big, flavor, trace=True)
    assert list(out.tensors) == ["w"]
    assert f'w = {NAME}["w"].requires_grad_()' in out.text
    _ruff_clean(out.text)
    _compare(_run(_in_folder(tmp_path, out)), big)
    _same_as_inline(big, out, flavor, trace=True)
    # a few edited numbers read better where they are used
    small = export_python(_leaf_doc(3), flavor)
    assert small.weights is None and small.tensors == {}
    assert "safetensors" not in small.text and "requires_grad=True" in small.text


def test_a_value_its_dtype_cannot_hold_exactly_stays_in_the_script():
    doc = _leaf_doc(INLINE_LIMIT)
    w = next(n for n in doc.nodes if n.id == "w")
    w.params["value"][0][0] = 0.1  # (float32's nearest is another number: the document keeps 0.1)
    out = export_python(doc, "torch")
    assert out.weights is None and "0.1" in out.text
    assert from_python(out.text).model_dump(mode="json") == from_python(
        to_python(doc, "torch")
    ).model_dump(mode="json")


def test_a_script_without_its_weights_file_fails_at_the_line_that_loads_it(lenet):
    out = export_python(lenet, "torch")
    with pytest.raises(ImportFailed) as failed:
        from_python(out.text)
    first = failed.value.problems[0]
    assert first.line == _load_line(out.text)
    assert "weights" in first.message and ".safetensors" in first.message


def _file(header, body=b""):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + body


@pytest.mark.parametrize(
    "data, said",
    [
        (b"\x00" * 4, "too short"),
        (struct.pack("<Q", 10**12) + b"{}", "header's length"),
        (_file({"w": {"dtype": "F32", "shape": [10**9], "data_offsets": [0, 4 * 10**9]}}), "limit"),
        (_file({"w": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8), "dtype"),
        (_file({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8), "bytes"),
        ("not bytes", "bytes"),
    ],
)
def test_a_weights_file_is_checked_before_it_is_read(lenet, data, said):
    out = export_python(lenet, "torch")
    with pytest.raises(ImportFailed) as failed:
        from_python(out.text, weights=data)
    assert said in str(failed.value)


def test_a_tensor_the_file_lacks_is_named(lenet):
    out = export_python(lenet, "torch")
    tensors = dict(out.tensors)
    del tensors["fc1.bias"]
    with pytest.raises(ImportFailed) as failed:
        from_python(out.text, weights=tensors)
    assert "no tensor 'fc1.bias'" in str(failed.value)


def test_cli_writes_the_weights_beside_the_script_and_reads_them_back(lenet, tmp_path, capsys):
    graph = tmp_path / "lenet.json"
    graph.write_text(lenet.model_dump_json())
    script = tmp_path / "lenet.py"
    assert cli.main(["export", str(graph), "--to", "torch", "-o", str(script)]) == 0
    weights = tmp_path / "lenet.safetensors"
    assert weights.is_file() and "lenet.safetensors" in capsys.readouterr().err
    out = export_python(lenet, "torch")
    assert script.read_text() == out.text and weights.read_bytes() == out.weights
    back = tmp_path / "back.json"
    assert cli.main(["import", str(script), "-o", str(back)]) == 0
    want = from_python(out.text, weights=out.weights).model_dump(mode="json")
    assert json.loads(back.read_text()) == want
    # without the file beside it: the line that loads it, in the one-line-each error
    weights.unlink()
    assert cli.main(["import", str(script)]) == 1
    err = capsys.readouterr().err
    assert f"lenet.py:{_load_line(out.text)}: this line loads the weights" in err
    # to stdout: one text, every value in it
    assert cli.main(["export", str(graph), "--to", "torch"]) == 0
    assert capsys.readouterr().out == to_python(lenet, "torch")
