"""The local gate without its embedding model.

The shipped weights and data, the explicit rule, the hand features and the cascade's trust
file; what embeds with MiniLM is in tests/integration/test_local_gate.py.
"""

from __future__ import annotations

import json

import pytest

from assistant.config import Settings
from assistant.gates.local import (
    FEATURE_NAMES,
    GateWeights,
    LocalGate,
    explicit_memory_reference,
    hand_features,
    memory_query,
    scan_capitals,
)
from assistant.gates.local.language import unfamiliar, vocabulary_of
from training.train_gate import dataset_digest, load_examples


def test_shipped_weights_match_shipped_data():
    # Editing the data without retraining would make every figure in the report stale.
    weights = GateWeights.load(LocalGate().weights_path)
    assert weights.dataset_sha256 == dataset_digest(load_examples())
    assert 0.0 < weights.threshold <= 0.5
    assert weights.cascade_low < weights.threshold <= weights.cascade_high
    # What it reads as familiar is what it was trained on, word for word.
    assert weights.vocabulary == vocabulary_of(e.message for e in load_examples())


def test_a_message_mostly_of_words_the_gate_never_saw_is_unfamiliar():
    known = vocabulary_of(["when is my dentist appointment", "what time is the dinner"])
    # Half or more of its words unseen, two at least: the gate cannot judge it.
    assert unfamiliar("kapan dentist nya?", known)
    assert unfamiliar("dinner jam brp", known)
    # Known words, a capitalised name, or a single odd word leave it readable.
    assert not unfamiliar("what time is the dinner with Oyelaran Adebayo?", known)
    assert not unfamiliar("when is my dentist appointment lah", known)
    assert not unfamiliar("what time is it, ntombi?", known)
    # Weights without a vocabulary cannot tell, and change nothing.
    assert not unfamiliar("kapan dentist nya?", frozenset())


def test_the_vocabulary_is_stored_with_the_weights(tmp_path):
    weights = GateWeights.load(LocalGate().weights_path)
    path = tmp_path / "gate.npz"
    weights.save(path)
    assert GateWeights.load(path).vocabulary == weights.vocabulary


# Unseen test sets, never trained or tuned on: (file, split name, accuracy and recall floor).
# The second and third were written by other authors than the training data; their floors
# sit a little under the measured figures (docs/gate-report.md), to catch regressions.
FRESH_SETS = [
    ("gate_fresh_test.jsonl", "fresh", 0.95, 0.98),  # v8: 0.951 / 0.993
    ("gate_fresh2_test.jsonl", "fresh2", 0.93, 0.95),
    ("gate_fresh3_test.jsonl", "fresh3", 0.94, 0.95),
    # Issue 13's kinds: quantities over the user's past, earlier chats, budgets, and
    # first-person requests that carry their own context (the fourth version: 0.883).
    ("gate_fresh4_test.jsonl", "fresh4", 0.94, 0.97),
    # Other voices, written by prompts that read no project file, each scored once at a
    # final check before becoming a dev set (v9: fresh5 0.950 / 0.975, fresh6 0.953 /
    # 0.975, fresh7 0.932 / 0.985, and fresh8, scored once, 0.948 / 0.980).
    ("gate_fresh5_test.jsonl", "fresh5", 0.94, 0.96),
    ("gate_fresh6_test.jsonl", "fresh6", 0.94, 0.96),
    ("gate_fresh7_test.jsonl", "fresh7", 0.92, 0.97),
    ("gate_fresh8_test.jsonl", "fresh8", 0.93, 0.96),
]


def _fresh_rows(name: str) -> list:
    from training.train_gate import DATA_PATH

    return load_examples(DATA_PATH.parent / name)


@pytest.mark.parametrize(("name", "split", "accuracy", "recall"), FRESH_SETS)
def test_fresh_sets_are_never_trained_on(name, split, accuracy, recall):
    # The fresh sets are the honest unseen checks: they must not leak into the training file.
    fresh = _fresh_rows(name)
    assert {e.split for e in fresh} == {split} and len(fresh) >= 200
    trained = {e.message.strip().lower() for e in load_examples()}
    assert not [e.message for e in fresh if e.message.strip().lower() in trained]


def test_external_sets_are_never_trained_on():
    # Only where the external data is checked out beside the project (not in CI's clone).
    from training.train_gate import DATA_PATH

    eval_dir = Settings.from_env().eval_dir or DATA_PATH.parents[3] / "shared" / "eval"
    files = sorted(eval_dir.glob("gate_external*.jsonl"))
    if not files:
        pytest.skip(f"no external gate sets in {eval_dir}")
    external = {json.loads(line)["message"].strip().lower() for f in files for line in f.open()}
    trained = {e.message.strip().lower() for e in load_examples()}
    assert not trained & external


@pytest.mark.parametrize(
    "message",
    [
        "I'm 170 cm and 68 kg, what's my BMI?",
        "I'm allergic to cats but want a pet, what are my options?",
        "remind me to buy milk",
        "Do you like jazz?",
        "What did Einstein say about God?",
        # The message carries its own material, so memory adds nothing.
        "what did I do wrong here?\n\nfor i in range(3) print(i)",
        "what did i do wrong: def f(x): return x +",
    ],
)
def test_explicit_rule_leaves_self_contained_messages_alone(message):
    assert not explicit_memory_reference(message)


def test_name_cues_tell_a_friend_from_a_famous_person():
    names = list(FEATURE_NAMES)
    friend = hand_features("When did Noor move to Leeds?")
    famous = hand_features("What was Amelia Earhart's last flight?")
    assert friend[names.index("lone_capitalised")] >= 1
    assert friend[names.index("capitalised_run")] == 0
    assert famous[names.index("capitalised_run")] == 1
    told = hand_features("What movies did you recommend to me?")
    taste = hand_features("What kind of music do I like?")
    assert told[names.index("earlier_chat")] == 1 and taste[names.index("my_taste")] == 1
    # A request in the present tense is not a reference to what was said before.
    assert hand_features("Can you tell me a joke?")[names.index("earlier_chat")] == 0


@pytest.mark.parametrize(
    "message",
    [
        "I am tired of winter, what is the warmest city in Europe?",
        "Who sat on the Iron Throne first?",
        "What does wed mean in old English?",
        "Why did Napoleon march on Moscow?",
        "Why is the sun hot?",
    ],
)
def test_ordinary_words_are_not_time_words(message):
    # "am", "sat", "wed", "sun" and "march" are words before they are days or months.
    assert hand_features(message)[list(FEATURE_NAMES).index("time_words")] == 0


@pytest.mark.parametrize(
    "message",
    ["What is the capital of Georgia?", "Who is Kim Jong Un?", "Is Jordan safe to visit?"],
)
def test_places_and_surnames_are_not_friends(message):
    caps = scan_capitals(message)
    assert (caps.bare_names, caps.full_names, caps.name_possessives) == (0, 0, 0)
    assert scan_capitals("Did Priya call?").bare_names == 1


def test_missing_weights_say_how_to_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="training.train_gate"):
        LocalGate(weights_path=tmp_path / "none.npz").decide("hello")


def test_hand_features_tell_dates_from_quantities():
    names = list(FEATURE_NAMES)
    dated = hand_features("On May 2nd, which film did I watch?")
    sums = hand_features("Tom buys 4 shirts at $15 each. How much does he pay?")
    assert len(dated) == len(FEATURE_NAMES)
    assert dated[names.index("date_or_time")] == 1 and dated[names.index("numbers")] == 0
    assert sums[names.index("numbers")] > 0 and sums[names.index("date_or_time")] == 0


def test_memory_query_drops_filler():
    assert memory_query("hey, can you remind me when I'm meeting Alex again?") == (
        "when I'm meeting Alex?"
    )
    assert memory_query("ok") == "ok"


def test_trust_is_filed_per_model_and_quoted_from_its_measurement(tmp_path) -> None:
    from assistant.gates.trust import LlmTrust, load_trust, save_trust

    path = tmp_path / "trust.json"
    assert not load_trust("some-model", path).measured
    assert load_trust("some-model", path).summary("llm") == "llm: not measured with this model"
    scores = {"llm": {"accuracy": 0.71, "recall": 0.8, "p50_ms": 412.0, "n": 360}}
    save_trust(LlmTrust("m.gguf", True, "yes-no", 0.35, 0.0, 0.0, scores), path)
    trust = load_trust("m.gguf", path)
    assert (trust.threshold, trust.asks_llm) == (0.35, False)
    assert trust.summary("llm") == ("llm: accuracy 0.71, recall 0.80 on 360 held-out messages")
