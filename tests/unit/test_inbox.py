"""The inbox: each chat-box message taken once and in order, however many reruns carry it."""

from __future__ import annotations

import threading

from assistant.page.inbox import Inbox, sent_messages


def sent(*texts: str, start: int = 1) -> list[dict[str, object]]:
    """The chat box's `sent` list for `texts`, numbered from `start`."""
    return [{"id": start + i, "text": text} for i, text in enumerate(texts)]


def messages(inbox: Inbox) -> list[object]:
    return [w.message for w in inbox.waiting()]


def test_every_rerun_carries_every_message_and_each_is_taken_once() -> None:
    inbox = Inbox()
    # The run carrying [1] was stopped before its callback ran; the next carries [1, 2].
    assert inbox.take(sent("one", "two")) == 2
    assert inbox.take(sent("one", "two", "three")) == 1
    assert inbox.take(sent("one", "two", "three")) == 0  # the same state again: nothing new
    assert messages(inbox) == ["one", "two", "three"]
    assert inbox.taken == 3


def test_messages_are_taken_in_the_order_sent_whatever_the_list_order() -> None:
    inbox = Inbox()
    inbox.take([{"id": 2, "text": "second"}, {"id": 1, "text": "first"}])
    assert messages(inbox) == ["first", "second"]


def test_the_box_may_forget_taken_messages() -> None:
    inbox = Inbox()
    inbox.take(sent("one", "two"))
    inbox.take(sent("three", start=3))  # 1 and 2 were taken: the box no longer sends them
    assert messages(inbox) == ["one", "two", "three"]


def test_two_identical_messages_are_two_messages() -> None:
    inbox = Inbox()
    inbox.take(sent("hi", "hi"))
    assert messages(inbox) == ["hi", "hi"]
    first, second = inbox.waiting()
    assert first != second


def test_empty_and_invisible_messages_are_skipped_but_taken() -> None:
    inbox = Inbox()
    assert inbox.take(sent("  ", "\u200b\u200d", " hello ")) == 1
    assert messages(inbox) == ["hello"]
    assert inbox.taken == 3


def test_anything_the_box_did_not_write_is_ignored() -> None:
    garbage = [
        None,
        "text",
        {"id": "1", "text": "a string id"},
        {"id": True, "text": "a bool id"},
        {"id": 1.0, "text": "a float id"},
        {"id": 1},
        {"text": "no id"},
    ]
    assert sent_messages(garbage) == []
    assert sent_messages({"sent": []}) == []
    assert sent_messages(None) == []
    assert Inbox().take(garbage) == 0


def test_finish_records_an_answer_once_and_removes_that_message() -> None:
    inbox = Inbox()
    inbox.take(sent("one", "two"))
    head = inbox.waiting()[0]
    recorded: list[str] = []
    assert inbox.finish(head, lambda: recorded.append("one"))
    # A stopped run that finished the same answer later records nothing.
    assert not inbox.finish(head, lambda: recorded.append("one again"))
    assert recorded == ["one"]
    assert messages(inbox) == ["two"]


def test_two_runs_taking_at_once_take_each_message_once() -> None:
    inbox = Inbox()
    state = sent(*(f"message {n}" for n in range(200)))
    start = threading.Barrier(8)

    def run() -> None:
        start.wait()
        for end in range(1, len(state) + 1):
            inbox.take(state[:end])

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert messages(inbox) == [f"message {n}" for n in range(200)]


def test_other_messages_join_and_new_conversation_keeps_the_numbers() -> None:
    inbox = Inbox()
    inbox.take(sent("typed"))
    inbox.append("Tell me a joke")  # an example button
    assert "Tell me a joke" in inbox and len(inbox) == 2
    inbox.clear()
    assert len(inbox) == 0 and inbox.taken == 1
    inbox.take(sent("typed"))  # number 1 again: already taken before the clear
    assert len(inbox) == 0


def test_a_talks_beats_keep_their_numbers_and_order_however_reruns_carry_them() -> None:
    # A burst of Next clicks: the chat box numbers each beat; reruns carry them all, merged.
    inbox = Inbox()
    beats = [{"id": i, "text": f"beat {i}", "beat": i} for i in (1, 2, 3)]
    inbox.take(beats[:1])
    inbox.take(beats)  # a merged rerun carries 1 again, and 2 and 3
    inbox.take([*beats, {"id": 4, "text": "typed", "beat": True}])  # not a beat number
    assert [(w.message, w.beat) for w in inbox.waiting()] == [
        ("beat 1", 1),
        ("beat 2", 2),
        ("beat 3", 3),
        ("typed", None),
    ]
    assert inbox.last_beat == 3
    inbox.clear()  # a new conversation: the talk starts again
    assert inbox.last_beat == 0
