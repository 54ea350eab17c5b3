"""Predict, then reveal, over real Socket.IO (room_quiz.py): the owner asks about one number of
its run, followers answer, the owner sees the spread as answers come, reveal tells each
follower whether it was right; the same with the owner and followers on two processes that
share Redis."""

import csv
import io

import pytest
from test_rooms import client, create, events, join, quiet, template, wait_event  # noqa: F401
from test_scale_out import processes  # noqa: F401

from backend.server.answer_literals import parse_answer

QUIZ_EVENTS = ("room_quiz", "room_answers", "room_select")
TARGET = {"kind": "grad", "id": "e1", "label": "the gradient on b → mean"}
# b = [1, 2, 3, 4] → b.mean(): b.grad = [0.25, 0.25, 0.25, 0.25]
TRUTH = [0.25, 0.25, 0.25, 0.25]


def listen(rec):
    for event in QUIZ_EVENTS:
        rec.client.on(event, lambda data, event=event: rec.on(event, data))
    return rec


def ask(owner, code, truth=TRUTH, **fields):
    ack = owner.call("room_ask", {"code": code, "target": TARGET, "truth": truth, **fields})
    assert ack.get("ok"), ack
    return ack["quiz_id"]


def answer(rec, code, quiz_id, text, **fields):
    return rec.call("room_answer", {"code": code, "quiz_id": quiz_id, "answer": text, **fields})


@pytest.fixture
def room(client):  # noqa: F811
    owner = listen(client())
    students = [listen(client()) for _ in range(3)]
    code = create(owner, template("square-of-a-sum"))
    for s in students:
        join(s, code)
    return owner, students, code


def test_a_round_two_right_one_wrong(room):
    owner, students, code = room
    quiz_id = ask(owner, code, question="what is b.grad?")
    # followers get the question, never the value
    for s in students:
        (q,) = wait_event(s, "room_quiz")
        assert q["quiz"]["quiz_id"] == quiz_id
        assert q["quiz"]["status"] == "open" and q["quiz"]["shape"] == [4]
        assert "truth" not in q["quiz"] and "mistakes" not in q["quiz"]
    a = answer(students[0], code, quiz_id, "tensor([0.2500, 0.2500, 0.2500, 0.2500])")
    b = answer(students[1], code, quiz_id, "[1/4, 1/4, 1/4, 1/4]")
    c = answer(students[2], code, quiz_id, "0.25")  # the number, not the tensor
    assert a["ok"] and b["ok"] and c["ok"] and a["answer"] == "[0.25, 0.25, 0.25, 0.25]"
    spreads = wait_event(owner, "room_answers", 3)
    last = spreads[-1]
    assert last["answered"] == 3 and last["right"] == 2
    assert [(g["count"], g["right"]) for g in last["groups"]] == [(2, True), (1, False)]
    wrong = last["common_wrong"]
    assert wrong["answer"] == "0.25" and "tensor's shape [4]" in wrong["mistake"]
    # answering again replaces the answer (with the token), it does not count twice
    again = answer(students[2], code, quiz_id, "[0.25]*1", token=c["token"])
    assert "arithmetic on a list" in again["error"]
    again = answer(students[2], code, quiz_id, "[.25, .25, .25, .25]", token=c["token"])
    assert again["token"] == c["token"]
    last = wait_event(owner, "room_answers", 4)[-1]
    assert last["answered"] == 3 and last["right"] == 3
    answer(students[2], code, quiz_id, "0.25", token=c["token"])
    wait_event(owner, "room_answers", 5)

    ack = owner.call("room_reveal", {"code": code, "quiz_id": quiz_id})
    assert ack["spread"]["right"] == 2
    for s, mine, right in zip(students, (a, b, c), (True, True, False), strict=True):
        q = wait_event(s, "room_quiz", 2)[-1]["quiz"]
        assert q["status"] == "revealed" and q["truth"] == TRUTH
        assert q["truth_shown"] == "[0.25, 0.25, 0.25, 0.25]"
        assert q["verdicts"][mine["token"]] is right
        assert q["spread"]["answered"] == 3
    # answers are closed, and nobody but the owner reveals or asks
    assert "revealed" in answer(students[0], code, quiz_id, "1")["error"]
    assert "owner" in students[0].call("room_reveal", {"code": code, "quiz_id": quiz_id})["error"]
    refused = students[0].call("room_ask", {"code": code, "target": TARGET, "truth": 1})
    assert "owner" in refused["error"]


def test_a_joiner_gets_the_question_and_after_reveal_the_answer(room, client):  # noqa: F811
    owner, students, code = room
    quiz_id = ask(owner, code)
    late = client()
    q = join(late, code)["quiz"]
    assert q["quiz_id"] == quiz_id and "truth" not in q
    assert answer(late, code, quiz_id, "[0.25, 0.25, 0.25, 0.25]")["ok"]
    owner.call("room_reveal", {"code": code, "quiz_id": quiz_id})
    later = client()
    q = join(later, code)["quiz"]
    assert q["status"] == "revealed" and q["truth"] == TRUTH
    assert list(q["verdicts"].values()) == [True]
    # the owner ends it: gone on every page and for the next joiner
    assert owner.call("room_quiz_end", {"code": code})["ok"]
    assert wait_event(students[0], "room_quiz", 3)[-1]["quiz"] is None
    assert join(client(), code)["quiz"] is None


def test_mistakes_named_for_the_teacher(room):
    owner, students, code = room
    # x (2,) broadcast against (3, 2): the gradient of x sums over the rows
    truth = [3.0, 3.0]
    mistakes = [{"why": "only one path: forgot to add the gradient through mul", "value": [1, 1]}]
    quiz_id = ask(owner, code, truth=truth, mistakes=mistakes)
    answer(students[0], code, quiz_id, "[[1, 1], [1, 1], [1, 1]]")
    answer(students[1], code, quiz_id, "[1, 1]")
    answer(students[2], code, quiz_id, "[-3, -3]")
    groups = wait_event(owner, "room_answers", 3)[-1]["groups"]
    why = {g["answer"]: g["mistake"] for g in groups}
    assert why["[[1, 1], [1, 1], [1, 1]]"].startswith("forgot to sum over the broadcast")
    assert why["[1, 1]"] == mistakes[0]["why"]
    assert why["[-3, -3]"] == "the sign is flipped"
    # a number asked for, a one-element tensor answered: right numbers, wrong shape
    quiz_id = ask(owner, code, truth=33.0)
    answer(students[0], code, quiz_id, "[33.0]")
    (group,) = wait_event(owner, "room_answers", 4)[-1]["groups"]
    assert not group["right"] and group["mistake"].endswith("the value's shape is []")


def test_names_only_when_asked_and_csv_for_the_teacher(room):
    owner, students, code = room
    quiz_id = ask(owner, code, truth=2.0)
    answer(students[0], code, quiz_id, "2", name="Ada")  # not asked for: dropped
    text = owner.call("room_quiz_csv", {"code": code})["csv"]
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["answered_at", "answer", "right", "mistake"]
    assert rows[1][1:] == ["2", "yes", ""]
    assert "Ada" not in text

    quiz_id = ask(owner, code, truth=2.0, names=True)
    refused = answer(students[0], code, quiz_id, "2")
    assert "type your name" in refused["error"]
    answer(students[0], code, quiz_id, "2", name="Ada")
    answer(students[1], code, quiz_id, "-2", name="=HYPERLINK(1)")
    rows = list(csv.reader(io.StringIO(owner.call("room_quiz_csv", {"code": code})["csv"])))
    assert rows[0][-1] == "name"
    assert [r[1:] for r in rows[1:]] == [
        ["2", "yes", "", "Ada"],
        ["-2", "no", "the sign is flipped", "'=HYPERLINK(1)"],
    ]
    # followers never see names, even after reveal
    owner.call("room_reveal", {"code": code, "quiz_id": quiz_id})
    q = wait_event(students[2], "room_quiz", 3)[-1]
    assert "Ada" not in str(q)
    assert "refused" not in str(students[2].call("room_quiz_csv", {"code": code}))
    assert "owner" in students[2].call("room_quiz_csv", {"code": code})["error"]


def test_bad_answers_and_stale_questions_are_said(room):
    owner, students, code = room
    quiz_id = ask(owner, code)
    bad = answer(students[0], code, quiz_id, "import os")
    assert bad["error"].startswith("answer: not a number or a tensor")
    bad = answer(students[0], code, quiz_id, "torch.ones(4)")
    assert "a call of torch.ones at character 1" in bad["error"]
    assert quiet(owner, "room_answers")
    newer = ask(owner, code)
    assert "that question is over" in answer(students[0], code, quiz_id, "1")["error"]
    assert answer(students[0], code, newer, "1")["ok"]
    ragged = owner.call("room_ask", {"code": code, "target": TARGET, "truth": [[1, 2], [3]]})
    assert "equal-length rows" in ragged["error"]
    # the owner answers nothing, and a stranger neither
    assert "do not follow" in answer(owner, code, newer, "1")["error"]


def test_the_teachers_selected_edge_reaches_students_and_joiners(room, client):  # noqa: F811
    owner, students, code = room
    assert owner.call("room_select", {"code": code, "edge": "e3"})["ok"]
    for s in students:
        assert wait_event(s, "room_select")[-1] == {"code": code, "edge": "e3"}
    assert join(client(), code)["selected"] == "e3"
    assert "owner" in students[0].call("room_select", {"code": code, "edge": "e1"})["error"]


def test_a_round_with_students_on_two_processes(processes, client):  # noqa: F811
    """The owner on one process, students on both: every answer reaches the owner, and the
    reveal reaches every student with its own verdict."""
    from test_scale_out import connect

    def make(url):
        return listen(connect(url))

    owner = make(processes[0])
    students = [make(processes[0]), make(processes[1]), make(processes[1])]
    code = owner.call("room_create", {"graph": template("square-of-a-sum")})["code"]
    for s in students:
        assert "error" not in s.call("room_join", {"code": code})
    quiz_id = ask(owner, code)
    for s in students:
        wait_event(s, "room_quiz")
    texts = ["[0.25, 0.25, 0.25, 0.25]", "[.25, .25, .25, .25]", "[1, 1, 1, 1]"]
    acks = [answer(s, code, quiz_id, t) for s, t in zip(students, texts, strict=True)]
    last = wait_event(owner, "room_answers", 3)[-1]
    assert last["answered"] == 3 and last["right"] == 2
    owner.call("room_reveal", {"code": code, "quiz_id": quiz_id})
    for s, ack, right in zip(students, acks, (True, True, False), strict=True):
        q = wait_event(s, "room_quiz", 2)[-1]["quiz"]
        assert q["verdicts"][ack["token"]] is right
        np_truth = parse_answer(q["truth_shown"])
        assert np_truth.tolist() == TRUTH
    for rec in (owner, *students):
        rec.client.disconnect()
