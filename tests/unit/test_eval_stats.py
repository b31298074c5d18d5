"""The one percentile used by every evaluation and benchmark."""

from __future__ import annotations

import pytest

from assistant.eval.stats import percentile


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        (range(1, 21), 0.95, 19),  # nearest rank: ceil(0.95 * 20) = 19th value
        (range(1, 21), 0.50, 10),
        (range(1, 101), 0.95, 95),
        (range(1, 101), 1.0, 100),
        (range(1, 101), 0.0, 1),
        ([7.5], 0.95, 7.5),
        ([3, 1, 2], 0.5, 2),  # order of the input does not matter
        ([], 0.95, 0.0),
    ],
)
def test_percentile_is_a_value_that_was_seen(values, q, expected):
    assert percentile(values, q) == expected
