"""How far the LLM gate may be trusted, per model: measured, never hoped.

The cascade adds `weight` times the LLM's margin to the local gate's margin (a logit minus
its threshold's), and asks the LLM only inside `band` logits of the local threshold. Both
are fitted on held-out messages by `python -m bench calibrate-llm-gate`, which also writes
the scores the sidebar quotes (why: docs/llm-gate.md, "Calibration and the cascade's
trust"). A weight of 0: the cascade asks the LLM nothing and decides as the local gate
does. A model with no measurement keeps the old cascade: inside the local gate's own
unsure band the LLM decides, and the sidebar says it is unmeasured.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.config import GateMode

if TYPE_CHECKING:
    from assistant.config import Settings

TRUST_PATH = Path(__file__).resolve().parents[1] / "data" / "llm_trust.json"
UNMEASURED_WEIGHT = 1e6  # the LLM's answer overrides the local margin: the old cascade
HOSTED_CONFIDENCE = 0.95  # a yes or no without probabilities counts as this sure


def logit(p: float) -> float:
    """log(p / (1 - p)), clamped away from 0 and 1."""
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class LlmTrust:
    """What one model's LLM gate was measured to be worth."""

    model: str
    measured: bool = False
    style: str = "json"  # how the built-in server asks: "json" or "yes-no"
    threshold: float = 0.5  # P(true) at or above which the LLM gate retrieves
    weight: float = UNMEASURED_WEIGHT  # the LLM margin's weight in the cascade
    band: float | None = None  # |local margin| below which the cascade asks; None: weights'
    scores: dict[str, Any] = field(default_factory=dict)  # held-out figures, for help texts

    @property
    def asks_llm(self) -> bool:
        """False when measurement gave the LLM no say: the cascade then never calls it."""
        return self.weight > 0 and (self.band is None or self.band > 0)

    def llm_margin(self, retrieve: bool, p_true: float | None) -> float:
        """The LLM's vote in logits: from its probability, or from a bare yes / no."""
        if p_true is None:
            p_true = HOSTED_CONFIDENCE if retrieve else 1 - HOSTED_CONFIDENCE
        return logit(p_true) - logit(self.threshold)

    def summary(self, mode: str) -> str:
        """One line for the sidebar: what `mode` scored with this model, or that it was not."""
        figures = self.scores.get(mode)
        if not self.measured or not figures:
            return f"{mode}: not measured with this model"
        # No time here: calibration runs whenever it runs, on whatever load the machine has
        # (its llm p50 was taken beside two other model servers); each badge shows its own.
        scored = (
            f"accuracy {figures['accuracy']:.2f}, recall {figures['recall']:.2f} "
            f"on {figures['n']} held-out messages"
        )
        if mode == GateMode.CASCADE and not self.asks_llm:
            # A mode that silently does nothing is a trap for a presenter: say it first.
            return (
                "cascade is local with this model: the LLM's vote was measured no help "
                f"here, so it is never asked ({scored})"
            )
        return f"{mode}: {scored}"


def trust_key(settings: Settings) -> str:
    """The name the LLM gate's measurements are filed under: the gate model's, or on our
    own llama.cpp server the model file's."""
    if settings.native_url is None:
        return settings.gate_model
    from assistant.runtime.model_file import DEFAULT_MODEL_FILE

    return Path(settings.local_model).name if settings.local_model else DEFAULT_MODEL_FILE


def load_trust(model: str, path: Path = TRUST_PATH) -> LlmTrust:
    """The measured trust for `model`, or the unmeasured default."""
    try:
        table = json.loads(path.read_text())
    except FileNotFoundError:
        return LlmTrust(model)
    entry = table.get(model)
    if entry is None:
        return LlmTrust(model)
    return LlmTrust(
        model=model,
        measured=True,
        style=entry["style"],
        threshold=float(entry["threshold"]),
        weight=float(entry["weight"]),
        band=float(entry["band"]),
        scores=entry.get("scores", {}),
    )


def save_trust(trust: LlmTrust, path: Path = TRUST_PATH) -> None:
    """Write one model's entry, keeping the others."""
    table = json.loads(path.read_text()) if path.exists() else {}
    table[trust.model] = {
        "style": trust.style,
        "threshold": trust.threshold,
        "weight": trust.weight,
        "band": trust.band,
        "scores": trust.scores,
    }
    path.write_text(json.dumps(table, indent=2, sort_keys=True) + "\n")
