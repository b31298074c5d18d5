"""Settings read from the environment: the reply temperature."""

from __future__ import annotations

import pytest


def test_the_built_in_model_replies_at_the_measured_temperature_and_others_at_their_own():
    from assistant.config import BUILT_IN_TEMPERATURE, Settings, SettingsError

    assert Settings.from_env({}).reply_temperature == BUILT_IN_TEMPERATURE
    assert Settings.from_env({"ANTHROPIC_API_KEY": "k"}).reply_temperature is None
    assert Settings.from_env({"MEMGATE_TEMPERATURE": "default"}).reply_temperature is None
    assert Settings.from_env({"MEMGATE_TEMPERATURE": "0.7"}).reply_temperature == 0.7
    with pytest.raises(SettingsError, match="MEMGATE_TEMPERATURE"):
        Settings.from_env({"MEMGATE_TEMPERATURE": "hot"})
