"""The gate report's cascade section runs the real cascade against a fake LLM and counts calls."""

from __future__ import annotations

import pytest

from assistant.gates.labels import Row
from assistant.gates.local import explicit_memory_reference, gate_text, shared_local_gate
from bench.gate_report import _cascade_calls


@pytest.mark.chroma  # the local gate embeds through ONNX
def test_cascade_calls_counts_the_llm_and_reports_the_unsure_band():
    rows = [
        Row("What's the capital of Peru?", False, {}),
        Row("When is my dentist appointment?", True, {}),
        Row("hmm, what about the thing from before", True, {}),
    ]
    calls = _cascade_calls(rows)
    low, high = calls["band"]
    assert 0.0 <= low < high <= 1.0
    assert calls["n"] == 3
    # The fake LLM is asked exactly for the unsure messages the rule does not settle.
    local = shared_local_gate()
    unsure = [
        row
        for row, p in zip(rows, local.probabilities([r.message for r in rows]), strict=True)
        if low <= p < high and not explicit_memory_reference(gate_text(row.message))
    ]
    assert calls["llm_calls"] == len(unsure)
    assert calls["decided_locally"] == pytest.approx(1 - calls["llm_calls"] / 3, abs=1e-4)
