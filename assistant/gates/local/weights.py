"""The local gate's trained weights: a small neural network, and how it is stored."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assistant.gates.local.cues import FEATURE_NAMES, FEATURE_VERSION

WEIGHTS_PATH = Path(__file__).resolve().parents[2] / "data" / "local_gate.npz"
FIX = "Fix: python -m training.train_gate (in a checkout)"


@dataclass(frozen=True)
class GateWeights:
    """One hidden layer (ReLU) over [embedding, hand cues], standardised; sigmoid out."""

    mean: np.ndarray  # (d,) feature means on the training split
    scale: np.ndarray  # (d,) feature standard deviations on the training split
    hidden_w: np.ndarray  # (d, h)
    hidden_b: np.ndarray  # (h,)
    out_w: np.ndarray  # (h,)
    out_b: float
    threshold: float  # P(retrieve) at or above which we retrieve
    cascade_low: float  # unsure band for the cascade: [low, high)
    cascade_high: float
    l2: float
    feature_version: int = FEATURE_VERSION
    dataset_sha256: str = ""
    # The words of the messages it was trained on: a message mostly of others is one it
    # cannot judge (assistant/gates/local/language.py).
    vocabulary: frozenset[str] = frozenset()

    def logits(self, features: np.ndarray) -> np.ndarray:
        """The network's log-odds of retrieve for a (n, d) feature matrix."""
        x = (features - self.mean) / self.scale
        return np.maximum(x @ self.hidden_w + self.hidden_b, 0.0) @ self.out_w + self.out_b

    def probability(self, features: np.ndarray) -> np.ndarray:
        """P(retrieve) for a (n, d) feature matrix."""
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(features), -30.0, 30.0)))

    def stored(self) -> GateWeights:
        """These weights as `save` writes them (float32), so thresholds are set on what ships."""
        f32 = {
            name: getattr(self, name).astype(np.float32).astype(np.float64)
            for name in ("mean", "scale", "hidden_w", "hidden_b", "out_w")
        }
        return GateWeights(
            **f32,
            out_b=float(np.float32(self.out_b)),
            threshold=self.threshold,
            cascade_low=self.cascade_low,
            cascade_high=self.cascade_high,
            l2=self.l2,
            feature_version=self.feature_version,
            dataset_sha256=self.dataset_sha256,
            vocabulary=self.vocabulary,
        )

    def save(self, path: Path) -> None:
        """Write the weights as a small compressed .npz, arrays in float32."""
        np.savez_compressed(
            path,
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
            hidden_w=self.hidden_w.astype(np.float32),
            hidden_b=self.hidden_b.astype(np.float32),
            out_w=self.out_w.astype(np.float32),
            out_b=np.float32(self.out_b),
            threshold=np.float64(self.threshold),
            cascade_low=np.float64(self.cascade_low),
            cascade_high=np.float64(self.cascade_high),
            l2=np.float64(self.l2),
            feature_version=np.int64(self.feature_version),
            feature_names=np.array(FEATURE_NAMES),
            dataset_sha256=np.array(self.dataset_sha256),
            vocabulary=np.array(sorted(self.vocabulary), dtype=str),
        )

    @classmethod
    def load(cls, path: Path) -> GateWeights:
        """Read weights written by `save`; refuses files from another feature version."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"Local gate weights not found at {path}. {FIX}")
        with np.load(path, allow_pickle=False) as data:
            version = int(data["feature_version"])
            if version != FEATURE_VERSION or tuple(data["feature_names"]) != FEATURE_NAMES:
                raise ValueError(
                    f"{path} was trained for features v{version}, this code computes "
                    f"v{FEATURE_VERSION}. {FIX}"
                )
            arrays = {
                name: data[name].astype(np.float64)
                for name in ("mean", "scale", "hidden_w", "hidden_b", "out_w")
            }
            return cls(
                **arrays,
                out_b=float(data["out_b"]),
                threshold=float(data["threshold"]),
                cascade_low=float(data["cascade_low"]),
                cascade_high=float(data["cascade_high"]),
                l2=float(data["l2"]),
                feature_version=version,
                dataset_sha256=str(data["dataset_sha256"]),
                vocabulary=frozenset(str(w) for w in data["vocabulary"])
                if "vocabulary" in data.files
                else frozenset(),
            )
