"""The clock times the model's copy of a fact says again: only where their reading is sure."""

import pytest

from assistant.reply.hours import with_clock_times


@pytest.mark.parametrize(
    ("fact", "copy"),
    [
        (
            "appt tues 11 june 9.40am - bp check",
            "appt tues 11 june 9.40am (time: 9:40 am) - bp check",
        ),
        ("kontrolle Fr 22. nov 08:15", "kontrolle Fr 22. nov 08:15 (time: 8:15 am)"),
        ("dinner 7pm at Nopa", "dinner 7pm (time: 7:00 pm) at Nopa"),
        ("check-in 10:30 a.m. sharp", "check-in 10:30 a.m. (time: 10:30 am) sharp"),
        ("vet at 9am.", "vet at 9am (time: 9:00 am)."),
        ("vet Wed 16:40, then 15h", "vet Wed 16:40 (4:40 pm), then 15h (3 pm)"),
    ],
)
def test_a_time_whose_reading_is_sure_is_said_again(fact, copy):
    assert with_clock_times(fact) == copy


@pytest.mark.parametrize(
    "fact",
    [
        "recheck Do 5. dez 10:30",  # morning or evening: the fact does not say
        "B12 am I low?",  # a vitamin
        "lunch £12.50pm",  # money
        "flight 07.05",  # a date, maybe
        "alarm code 4471#",
    ],
)
def test_a_time_that_may_be_read_two_ways_or_no_time_is_left_as_it_is(fact):
    assert with_clock_times(fact) == fact
