"""Predict, then reveal: a room's question about one number of the teacher's last run.

The teacher points at an edge's gradient, a node's value or a leaf's `.grad` and asks; each
student's page hides that number and offers an answer field (answer_literals.py reads it:
nothing typed runs as code). The teacher's page sends the true value with the question (it
has the run) and, where it can tell, the wrong values that typical mistakes give (one path
of two, the value instead of the gradient); the true value stays on the server until the
teacher reveals it. Every answer is compared with it as it arrives, so the teacher sees how
many answered and the spread of answers, grouped, the most common wrong one first with the
mistake it suggests. "Reveal" sends the value to everyone with, for each answer's token
(known only to the page that answered), whether it was right.

A round is plain data (dicts and lists of numbers) so that it is kept in the room registry,
in memory or in Redis, where every process of a lecture hall reads and adds to it.
Answers are anonymous unless the teacher asks for names; names go to the teacher only.

Right means: the same shape as the value (a plain number for a one-element tensor too), each
number within 0.5% or 0.0005 of it (a student computes by hand from values shown with four
significant digits).
"""

import csv
import io
import secrets
import time

import numpy as np

from .answer_literals import MAX_ELEMENTS, AnswerError, format_answer, parse_answer

RTOL, ATOL = 5e-3, 5e-4
MAX_MISTAKES = 8
BROADCAST = (
    "forgot to sum over the broadcast: a broadcast input's gradient is summed over the "
    "dimensions it was stretched along"
)
PER_ELEMENT = "the right number for each element, but the gradient has the tensor's shape {shape}"
SIGN = "the sign is flipped"
SHAPE = "the right numbers in the wrong shape: the value's shape is {shape}"


class QuizError(ValueError):
    pass


def _array(value, what):
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise QuizError(f"{what} is not a number or equal-length rows of numbers") from None
    if array.dtype == object or array.size > MAX_ELEMENTS:
        raise QuizError(f"{what} has more than {MAX_ELEMENTS:,} numbers or ragged rows")
    return array


def new_round(target, question, names, truth, mistakes=()):
    """A round as the registry keeps it (the truth included; see `public`)."""
    truth = _array(truth, "the true value")
    kept = []
    for m in list(mistakes)[:MAX_MISTAKES]:
        kept.append({"why": m["why"], "value": _array(m["value"], "a mistake's value").tolist()})
    return {
        "quiz_id": secrets.token_hex(6),
        "target": target,
        "question": question,
        "names": bool(names),
        "status": "open",
        "truth": truth.tolist(),
        "shape": list(truth.shape),
        "mistakes": kept,
    }


def matches(answer, truth):
    answer, truth = np.asarray(answer, dtype=np.float64), np.asarray(truth, dtype=np.float64)
    if answer.shape != truth.shape and not (answer.ndim == 0 and truth.size == 1):
        return False
    answer = answer.reshape(truth.shape)
    return bool(np.allclose(answer, truth, rtol=RTOL, atol=ATOL, equal_nan=True))


def _summed_to(answer, shape):
    """`answer` summed over the dimensions a tensor of `shape` is broadcast along to reach
    answer's shape, or None when it does not broadcast that way."""
    if answer.ndim < len(shape) or answer.size <= int(np.prod(shape, dtype=np.int64)):
        return None
    lead = answer.ndim - len(shape)
    out = answer.sum(axis=tuple(range(lead))) if lead else answer
    for axis, (have, want) in enumerate(zip(out.shape, shape, strict=True)):
        if want == 1 and have != 1:
            out = out.sum(axis=axis, keepdims=True)
        elif have != want:
            return None
    return out


def diagnose(answer, quiz):
    """The mistake a wrong answer suggests, in words, or None."""
    answer = np.asarray(answer, dtype=np.float64)
    truth = np.asarray(quiz["truth"], dtype=np.float64)
    summed = _summed_to(answer, truth.shape)
    if summed is not None and matches(summed, truth):
        return BROADCAST
    for m in quiz["mistakes"]:
        if matches(answer, m["value"]):
            return m["why"]
    same_numbers = answer.size == truth.size and matches(answer.reshape(truth.shape), truth)
    if answer.shape != truth.shape and same_numbers:
        return SHAPE.format(shape=list(truth.shape))
    if truth.size > 1 and answer.size == 1 and matches(np.full(truth.shape, answer.item()), truth):
        return PER_ELEMENT.format(shape=list(truth.shape))
    if np.any(truth != 0) and matches(-answer, truth):
        return SIGN
    return None


def new_answer(quiz, text, name=None, token=None):
    """An answer record for the registry; AnswerError when the text is not one."""
    value = parse_answer(text)
    return {
        "token": token or secrets.token_urlsafe(9),
        "text": text.strip()[:200],
        "value": value.tolist(),
        "shown": format_answer(value),
        "name": name if quiz["names"] else None,
        "at": time.time(),
    }


def spread(quiz, answers):
    """What the teacher sees: how many answered, how many were right, and the answers grouped
    (equal within the tolerance), biggest group first, each with whether it is right and the
    mistake a wrong one suggests; `common_wrong` is the biggest wrong group."""
    groups = []
    for a in sorted(answers, key=lambda a: a["at"]):
        value = np.asarray(a["value"], dtype=np.float64)
        for g in groups:
            if matches(value, g["_value"]) and matches(g["_value"], value):
                g["count"] += 1
                break
        else:
            right = matches(value, quiz["truth"])
            groups.append(
                {
                    "_value": value,
                    "answer": a["shown"],
                    "count": 1,
                    "right": right,
                    "mistake": None if right else diagnose(value, quiz),
                }
            )
    groups.sort(key=lambda g: -g["count"])  # (stable: ties keep the first answered first)
    for g in groups:
        del g["_value"]
    wrong = [g for g in groups if not g["right"]]
    return {
        "quiz_id": quiz["quiz_id"],
        "answered": len(answers),
        "right": sum(g["count"] for g in groups if g["right"]),
        "groups": groups,
        "common_wrong": wrong[0] if wrong else None,
    }


def public(quiz, answers=()):
    """What students (and joiners) see of a round: the question, and once it is revealed the
    value, the class's spread and each answer's verdict by token."""
    if quiz is None:
        return None
    view = {k: quiz[k] for k in ("quiz_id", "target", "question", "names", "status", "shape")}
    if quiz["status"] == "revealed":
        view["truth"] = quiz["truth"]
        view["truth_shown"] = format_answer(np.asarray(quiz["truth"]))
        view["verdicts"] = {a["token"]: matches(a["value"], quiz["truth"]) for a in answers}
        summary = spread(quiz, answers)
        view["spread"] = {k: summary[k] for k in ("answered", "right", "groups")}
    return view


def answers_csv(quiz, answers):
    """The answers for the teacher's download as CSV text, in the order they came: a header,
    then one row per answer (the name only when the round asked for names). A cell that a
    spreadsheet would take for a formula (a name typed as `=...`) is quoted as text."""
    head = ["answered_at", "answer", "right", "mistake"] + (["name"] if quiz["names"] else [])
    rows = [head]
    for a in sorted(answers, key=lambda a: a["at"]):
        right = matches(a["value"], quiz["truth"])
        row = [
            time.strftime("%H:%M:%S", time.gmtime(a["at"])),
            a["text"],
            "yes" if right else "no",
            "" if right else (diagnose(a["value"], quiz) or ""),
        ]
        rows.append(row + ([a.get("name") or ""] if quiz["names"] else []))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([_not_a_formula(c) for c in row])
    return out.getvalue()


def _not_a_formula(cell):
    return "'" + cell if cell[:1] in ("=", "+", "-", "@") and not _number(cell) else cell


def _number(cell):
    try:
        parse_answer(cell)
        return True
    except AnswerError:
        return False


__all__ = ["AnswerError", "QuizError", "answers_csv", "new_answer", "new_round", "public", "spread"]
