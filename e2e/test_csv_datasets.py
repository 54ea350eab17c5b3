"""Dataset nodes in the browser: a CSV loaded from a file into a dataset node, its features
and labels on the canvas, and a ragged file refused at the field with the row that is wrong."""

from editor import drag_op, open_editor, run_forward, select_node, value_of, wire
from playwright.sync_api import expect

GOOD = "x1,x2,y\n0.5,1.0,1\n-0.5,2.0,0\n1.5,-1.0,1\n"
RAGGED = "x1,x2,y\n0.5,1.0,1\n-0.5,2.0\n"


def load_csv(page, tmp_path, text, name="points.csv"):
    path = tmp_path / name
    path.write_text(text)
    page.get_by_label("inspector").get_by_label("load csv from a file").set_input_files(path)


def test_a_csv_dataset_from_a_file(page, tmp_path):
    open_editor(page)
    page.get_by_role("button", name="New", exact=True).click()
    data = drag_op(page, "dataset", 200, 200)
    page.get_by_label("inspector").get_by_label("kind", exact=True).select_option("csv")
    load_csv(page, tmp_path, GOOD)
    expect(page.get_by_label("inspector").get_by_label("csv", exact=True)).to_have_value(GOOD)
    labels = drag_op(page, "labels", 500, 200)
    wire(page, data, labels, "dataset")
    run_forward(page)
    assert value_of(page, data) == "[[0.5, 1], [-0.5, 2], [1.5, -1]]"
    assert value_of(page, labels) == "[[1], [0], [1]]"

    select_node(page, data)
    load_csv(page, tmp_path, RAGGED, "ragged.csv")
    page.get_by_role("button", name="Forward", exact=True).click()
    expect(page.get_by_test_id(f"node-{data}").get_by_role("alert")).to_contain_text(
        "row 3 has 2 values; the header has 3 columns"
    )
