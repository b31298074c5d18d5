"""The one registry of gate modes: what each needs, and what every reader of it sees."""

from __future__ import annotations

import pytest

from assistant.config import GateMode, Settings, SettingsError
from assistant.gates.cascade import CascadeGate
from assistant.gates.llm import LlmGate
from assistant.gates.local import LocalGate
from assistant.gates.registry import GateConfigError, build_gate, help_text, modes_for


def test_build_gate_modes(scripted_model) -> None:
    settings = Settings()
    assert isinstance(build_gate("local", settings, None), LocalGate)
    for mode in ("always", "never", "length"):
        assert build_gate(mode, settings, None).name == mode
    assert isinstance(build_gate("llm", settings, scripted_model), LlmGate)
    assert isinstance(build_gate("cascade", settings, scripted_model), CascadeGate)


@pytest.mark.parametrize("mode", ["llm", "cascade"])
def test_model_modes_need_a_client(mode: str) -> None:
    with pytest.raises(GateConfigError, match="ANTHROPIC_API_KEY"):
        build_gate(mode, Settings(), None)
    assert mode not in modes_for(False) and mode in modes_for(True)


def test_unknown_modes_are_refused_everywhere() -> None:
    with pytest.raises(GateConfigError, match="unknown gate mode"):
        build_gate("sometimes", Settings(), None)
    with pytest.raises(SettingsError, match="MEMGATE_GATE_MODE"):
        Settings.from_env({"MEMGATE_GATE_MODE": "sometimes"})


def test_settings_eval_and_help_all_read_the_registry() -> None:
    from assistant.eval import gate_eval

    assert Settings.from_env({"MEMGATE_GATE_MODE": "cascade"}).gate_mode == "cascade"
    parser = __import__("argparse").ArgumentParser()
    gate_eval.add_arguments(parser)
    choices = next(a.choices for a in parser._actions if a.dest == "gate")
    assert tuple(choices) == tuple(GateMode)
    assert all(f"{name}:" in help_text() for name in GateMode)


def test_only_a_real_key_makes_the_llm_gate_the_default() -> None:
    assert Settings.from_env({}).gate_mode == "local"
    assert Settings.from_env({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}).gate_mode == "local"
    assert Settings.from_env({"ANTHROPIC_API_KEY": "sk-x"}).gate_mode == "llm"


def test_the_sidebar_says_plainly_when_cascade_is_local_for_this_model():
    from assistant.gates.trust import load_trust

    trust = load_trust("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    assert trust.measured and not trust.asks_llm
    assert trust.summary("cascade").startswith("cascade is local with this model")
