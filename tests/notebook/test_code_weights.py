"""wg.to_code and wg.from_code with a trained graph's weights file (docs/code-export.md, "The
weights file"): with a path, the script and its .safetensors file are written beside each
other and read back as one document; without one, the text holds every value."""

import wiregrad as wg
from backend.graph.document.templates import load_template
from backend.graph.export import to_python
from backend.graph.running.trainer import Trainer


def test_to_code_with_a_path_writes_the_weights_beside_the_script(tmp_path):
    doc = load_template("lenet-digits")
    doc = doc.model_copy(update={"training": doc.training.model_copy(update={"steps": 2})})
    trainer = Trainer(doc)
    assert trainer.run() == "ok"
    trained = trainer.written_back()
    path = tmp_path / "net.py"
    text = wg.to_code(trained, path=path)
    assert path.read_text() == text and 'state_dict["fc1.weight"]' in text
    weights = tmp_path / "net.safetensors"
    assert weights.is_file()
    back = wg.from_code(text, weights=weights)
    assert back == wg.from_code(text, weights=weights.read_bytes())
    inline = wg.to_code(trained)
    assert inline == to_python(trained, "torch") and "safetensors" not in inline
    assert back == wg.from_code(inline)
