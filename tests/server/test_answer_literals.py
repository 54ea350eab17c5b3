"""Students' answers read as numbers and tensors, never run as code (answer_literals.py)."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from backend.server.answer_literals import AnswerError, format_answer, parse_answer


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("-0.5", -0.5),
        ("3", 3.0),
        ("1/3", 1 / 3),
        ("2*-1.5", -3.0),
        ("1e-3", 1e-3),
        ("[1, 2]", [1.0, 2.0]),
        ("(1, 2)", [1.0, 2.0]),
        ("[[1., 2.], [3., 4.]]", [[1.0, 2.0], [3.0, 4.0]]),
        ("torch.tensor([2., 2.])", [2.0, 2.0]),
        ("tensor([0.2500, 0.2500])", [0.25, 0.25]),
        ("tensor(6., grad_fn=<MulBackward0>)", 6.0),
        ("tensor([1., 2.], requires_grad=True)", [1.0, 2.0]),
        ("tensor([[1.]], dtype=torch.float64)", [[1.0]]),
        ("  [ -1 , +2 ]  ", [-1.0, 2.0]),
    ],
)
def test_literals_a_student_would_type_or_copy(text, want):
    np.testing.assert_array_equal(parse_answer(text), np.array(want))


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=6))
def test_what_pytorch_prints_reads_back(values):
    """A tensor as PyTorch prints it is read back to its values (at the printed precision)."""
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True) * 1
    got = parse_answer(repr(t))
    np.testing.assert_allclose(got, t.detach().numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty"),
        ("__import__('os')", "a call of __import__ at character 1"),
        ("__import__('os').system('true')", "a call of something"),
        ("x", "the name x"),
        ("torch.ones(3)", "a call of torch.ones"),
        ("[1, [2, 3]]", "rows of different lengths"),
        ("-[1, 2]", "a sign before a list"),
        ("[1] * 3", "arithmetic on a list"),
        ("1/0", "division by zero"),
        ("'3'", "is not a number"),
        ("True", "is not a number"),
        ("[1, 2", "not a number or a tensor"),
        ("1" * 2001, "longer than 2,000"),
    ],
)
def test_anything_else_is_refused_with_where(text, says):
    with pytest.raises(AnswerError, match=says.replace("(", r"\(").replace("[", r"\[")):
        parse_answer(text)


def test_nothing_is_evaluated(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(AnswerError):
        parse_answer(f"open({str(marker)!r}, 'w')")
    assert not marker.exists()


def test_format_answer():
    assert format_answer(np.array(0.25)) == "0.25"
    assert format_answer(np.array([[1.0, -2.0]])) == "[[1, -2]]"
    assert format_answer(np.array([1 / 3])) == "[0.3333]"
