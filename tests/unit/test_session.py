"""Session views over Exchange records: stats and chart rows."""

from __future__ import annotations

from dataclasses import replace

from assistant.gates.base import GateDecision, Method
from assistant.page.session import (
    DEFAULT_TOKENS_PER_SEARCH,
    CompareMedians,
    Scoreboard,
    SessionStats,
    compare_medians,
    scoreboard,
    session_stats,
    stage_rows,
)
from assistant.turn.chat import Exchange
from assistant.turn.pipeline import Timings, Turn, Usage, Variant
from memory.records import Memory


def _turn(
    message: str,
    retrieve: bool,
    *,
    memory_tokens: int = 0,
    variant: Variant = Variant.GATED,
    method: Method = Method.LOCAL,
    error: str | None = None,
    gate_ms: float = 3.0,
    total_ms: float = 20.0,
    model_ms: float = 0.0,
) -> Turn:
    memories = (Memory("m1", "x" * 4 * memory_tokens, 0.8, "", "seeded"),) if memory_tokens else ()
    return Turn(
        message=message,
        decision=GateDecision(
            retrieve, message if retrieve else "", "why", method, "local", gate_ms
        ),
        memories=memories,
        timings=Timings(
            gate_ms=gate_ms,
            search_ms=8.0,
            reply_ms=5.0,
            capture_ms=1.0,
            total_ms=total_ms,
            model_ms=model_ms,
        ),
        usage=Usage(memory_tokens=memory_tokens),
        error=error,
        variant=variant,
    )


def test_empty_session_has_zero_stats() -> None:
    assert session_stats([]) == SessionStats()
    assert stage_rows([]) == []


def _alone(*turns: Turn) -> list[Exchange]:
    return [Exchange(t.message, t) for t in turns]


def test_stats_count_gated_turns_and_skips() -> None:
    turns = _alone(
        _turn("2+2", False),
        _turn("Alex?", True, memory_tokens=30),
        _turn("joke", False),
        _turn("dentist?", True, memory_tokens=10, method=Method.FAILED_OPEN, error="boom"),
    )
    stats = session_stats(turns)
    assert (stats.turns, stats.searched, stats.skipped) == (4, 2, 2)
    assert (stats.failed_open, stats.errors) == (1, 1)
    assert stats.memory_tokens_injected == 40
    # Two skips, each estimated at the session's mean injected tokens (20).
    assert stats.memory_tokens_not_injected == 40


def test_not_injected_uses_the_default_before_anything_was_retrieved() -> None:
    stats = session_stats(_alone(_turn("2+2", False), _turn("joke", False)))
    assert stats.memory_tokens_not_injected == 2 * DEFAULT_TOKENS_PER_SEARCH


def test_compare_twins_give_the_measured_savings_and_do_not_count_as_turns() -> None:
    turns = [
        Exchange(
            "2+2", _turn("2+2", False), _turn("2+2", True, memory_tokens=7, variant=Variant.ALWAYS)
        ),
        Exchange(
            "Alex?",
            _turn("Alex?", True, memory_tokens=30),
            _turn("Alex?", True, memory_tokens=30, variant=Variant.ALWAYS),
        ),
    ]
    stats = session_stats(turns)
    assert (stats.turns, stats.skipped) == (2, 1)
    assert stats.memory_tokens_not_injected == 7  # what always-retrieve really injected
    assert stats.memory_tokens_injected == 30


def test_overhead_median_excludes_model_time() -> None:
    turns = _alone(
        _turn("a", False, total_ms=520.0, model_ms=500.0), _turn("b", False, total_ms=30.0)
    )
    assert session_stats(turns).median_overhead_ms == 25.0  # median of 20 and 30


def test_stage_rows_are_long_format_per_gated_turn() -> None:
    twin = _turn("a", True, variant=Variant.ALWAYS)
    rows = stage_rows([Exchange("a", _turn("a", False, gate_ms=2.5), twin)])
    assert rows == [
        {"turn": 1, "stage": "gate", "order": 0, "ms": 2.5},
        {"turn": 1, "stage": "search", "order": 1, "ms": 8.0},
        {"turn": 1, "stage": "reply", "order": 2, "ms": 5.0},
        {"turn": 1, "stage": "capture", "order": 3, "ms": 1.0},
    ]


def _timed(message: str, gated_ms: float | None, always_ms: float | None) -> Exchange:
    gated = replace(_turn(message, False), timings=Timings(first_token_ms=gated_ms))
    if always_ms is None:
        return Exchange(message, gated)
    always = _turn(message, True, memory_tokens=5, variant=Variant.ALWAYS)
    return Exchange(message, gated, replace(always, timings=Timings(first_token_ms=always_ms)))


def test_compare_medians_run_over_the_compare_exchanges_so_far() -> None:
    session = [
        _timed("a", 100.0, 900.0),
        _timed("b", 50.0, None),  # compare mode was off: not counted
        _timed("c", 300.0, 700.0),
        _timed("d", 200.0, 100.0),
    ]
    assert compare_medians([]) == CompareMedians()
    assert compare_medians(session) == CompareMedians(3, 200.0, 700.0)
    # Running: as the screen shows it beside exchange "c", then beside one not stored yet.
    assert compare_medians(session, session[2]) == CompareMedians(2, 200.0, 800.0)
    assert compare_medians(session[:1], session[3]) == CompareMedians(2, 150.0, 500.0)


def test_a_twin_without_a_first_token_is_left_out_of_its_median() -> None:
    medians = compare_medians([_timed("a", 100.0, None), _timed("b", None, 400.0)])
    assert medians == CompareMedians(1, None, 400.0)


def _first(turn: Turn, ms: float) -> Turn:
    return replace(turn, timings=replace(turn.timings, first_token_ms=ms))


def test_the_scoreboard_without_compare_mode_labels_its_first_token_an_estimate() -> None:
    exchanges = _alone(
        _first(_turn("alex", True, memory_tokens=30), 900.0),
        _first(_turn("2+2", False), 300.0),
        _first(_turn("joke", False), 400.0),
    )
    board = scoreboard(exchanges)
    assert (board.turns, board.skipped) == (3, 2)
    assert board.memory_tokens_kept_out == 60  # two skips, each what the search injected
    assert not board.measured_tokens and not board.measured_first_token
    assert board.gated_first_token_ms == 400.0  # median of 900, 300, 400
    assert board.always_first_token_ms == 900.0  # the turns that searched
    assert board.gate_median_ms == 3.0


def test_the_scoreboard_measures_what_compare_mode_ran() -> None:
    skip = _first(_turn("2+2", False), 300.0)
    twin = _first(_turn("2+2", True, memory_tokens=25, variant=Variant.ALWAYS), 1_100.0)
    board = scoreboard([Exchange("2+2", skip, twin)])
    assert board.measured_tokens and board.measured_first_token
    assert board.memory_tokens_kept_out == 25
    assert (board.gated_first_token_ms, board.always_first_token_ms) == (300.0, 1_100.0)
    assert board.first_token_over == 1


def test_an_empty_session_scores_nothing_and_no_search_means_no_estimate() -> None:
    assert scoreboard([]) == Scoreboard()
    board = scoreboard(_alone(_first(_turn("2+2", False), 300.0)))
    assert board.always_first_token_ms is None and not board.measured_first_token
