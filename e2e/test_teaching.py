"""Teaching features in the browser: a lesson walks its steps (selecting nodes, running),
presenter mode, the gradient-accumulation toggle, the backward-twice error, backward from a
tensor, which needs a gradient to start from, and the no_grad toggle."""

import re

import pytest
from editor import last_run, open_editor, run_backward, value_of, wait_finished
from playwright.sync_api import expect


@pytest.fixture(autouse=True)
def a_screen_with_room_for_the_full_text(page):
    """These tests read leaves' .grad lines, which a node draws when the fitted graph is at
    11/12 zoom or more (canvas/detail.ts): the screen is large enough for that."""
    page.set_viewport_size({"width": 2400, "height": 1500})


def test_a_lesson_walks_its_steps(page):
    open_editor(page, "square-of-a-sum")
    lesson = page.get_by_role("region", name="lesson")
    expect(lesson).to_contain_text("step 1 of 4")
    expect(lesson).to_contain_text("x and y are leaves")
    lesson.get_by_role("button", name="next →").click()
    expect(lesson).to_contain_text("step 2 of 4")
    expect(page.get_by_test_id("value-z")).to_have_text("25")  # the step ran forward
    expect(page.get_by_test_id("node-a")).to_have_class(re.compile("selected"))
    expect(page.get_by_test_id("grad-z")).to_have_count(0)
    lesson.get_by_role("button", name="next →").click()
    expect(page.get_by_test_id("grad-a")).to_have_text("∇ 10")  # the step ran backward
    lesson.get_by_role("button", name="next →").click()
    expect(lesson).to_contain_text("x.grad = y.grad = 10")
    expect(lesson.get_by_role("button", name="next →")).to_be_disabled()
    lesson.get_by_role("button", name="← back").click()
    expect(lesson).to_contain_text("step 3 of 4")


def test_presenter_mode_enlarges_the_page(page):
    open_editor(page, "square-of-a-sum")
    before = page.evaluate("getComputedStyle(document.querySelector('.app')).fontSize")
    page.get_by_role("button", name="Presenter").click()
    expect(page.get_by_role("button", name="Presenter")).to_have_attribute("aria-pressed", "true")
    after = page.evaluate("getComputedStyle(document.querySelector('.app')).fontSize")
    assert float(after.removesuffix("px")) > float(before.removesuffix("px"))
    expect(page.get_by_role("navigation", name="op palette")).to_be_hidden()
    run_backward(page)
    assert value_of(page, "z") == "25"


def test_gradients_accumulate_without_zero_grad(page):
    open_editor(page, "gradient-accumulation")
    lesson = page.get_by_role("region", name="lesson")
    lesson.get_by_role("button", name="run backward again").click()
    expect(page.get_by_test_id("leafgrad-x")).to_have_text(".grad 10")
    for grad in ("20", "30", "10"):  # accumulate, accumulate, then zero_grad again
        lesson.get_by_role("button", name="next →").click()
        expect(page.get_by_test_id("leafgrad-x")).to_have_text(f".grad {grad}")


def test_backward_twice_shows_pytorchs_error_until_retain_graph(page):
    open_editor(page, "backward-twice")
    run_backward(page, status="error", options=["call backward twice"])
    expect(
        page.get_by_role("alert").filter(has_text="backward through the graph a second time")
    ).to_be_visible()
    expect(page.get_by_test_id("node-z")).to_have_class(re.compile("has-problem"))
    run_backward(page, options=["call backward twice", "retain_graph=True"])
    # the second backward adds the same gradients again: 2 x 36 and 2 x 24
    expect(page.get_by_test_id("leafgrad-x")).to_have_text(".grad 72")
    expect(page.get_by_test_id("leafgrad-w")).to_have_text(".grad 48")


def test_backward_from_a_tensor_fails_until_it_starts_from_ones(page):
    open_editor(page, "vector-backward")
    run_backward(page, target="diff", status="error")
    expect(
        page.get_by_role("alert").filter(has_text="grad can be implicitly created only for scalar")
    ).to_be_visible()
    expect(page.get_by_test_id("node-diff")).to_have_class(re.compile("has-problem"))
    expect(page.get_by_test_id("leafgrad-a")).to_have_count(0)
    run_backward(page, target="diff", options=["gradient=ones_like(target)"])
    expect(page.get_by_test_id("leafgrad-a")).to_contain_text("3×3")
    expect(page.get_by_test_id("edge-grad-a-b-other")).to_be_visible()
    expect(page.get_by_test_id("node-diff")).not_to_have_class(re.compile("has-problem"))
    # the lesson's steps tick and clear the option themselves
    lesson = page.get_by_role("region", name="lesson")
    for status in ("error", "ok"):  # step 2: backward without it; step 3: from ones
        before = last_run(page)
        lesson.get_by_role("button", name="next →").click()
        wait_finished(page, before, status)
    expect(page.get_by_test_id("leafgrad-w4")).to_contain_text("3×3")


def test_no_grad_toggle_runs_forward_without_a_graph(page):
    open_editor(page, "no-grad-inference")
    toggle = page.get_by_role("button", name="no_grad", exact=True)
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    before = last_run(page)
    page.get_by_role("button", name="Forward", exact=True).click()
    wait_finished(page, before)
    assert value_of(page, "y") == "11"  # the same value, computed without a graph
    run_backward(page, status="error")  # no_grad stays on: nothing to walk back
    expect(
        page.get_by_role("alert").filter(has_text="does not require grad and does not have a")
    ).to_be_visible()
    expect(page.get_by_test_id("node-y")).to_have_class(re.compile("has-problem"))
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "false")
    run_backward(page)
    expect(page.get_by_test_id("leafgrad-x")).to_have_text(".grad 7")
    # the lesson turns it on for its inference steps, and off for the one before
    lesson = page.get_by_role("region", name="lesson")
    before = last_run(page)
    lesson.get_by_role("button", name="next →").click()  # step 2: forward under no_grad
    wait_finished(page, before)
    expect(toggle).to_have_attribute("aria-pressed", "true")
    lesson.get_by_role("button", name="← back").click()  # step 1: backward, autograd on
    expect(toggle).to_have_attribute("aria-pressed", "false")
