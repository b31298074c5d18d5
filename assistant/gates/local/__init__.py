"""The local gate: a small network over MiniLM embeddings and cheap text cues.

It makes the same narrow decision as the LLM gate (does this message need the user's
memory?) in a few milliseconds, with no network and no key. A plain reference to earlier
chats ("what did you recommend me?") retrieves whatever the network says.

- `text`: what the gate reads (gate_text) and the search query it writes (memory_query);
- `rule`: the explicit-reference rule (a plain reference to earlier chats retrieves);
- `language`: a message mostly of words the classifier was never trained on retrieves;
- `cues`: the hand cues, each feature's name and function defined once;
- `badge`: the reason in words, from the cues;
- `weights`: the trained network and its .npz file (`assistant/data/local_gate.npz`,
  written by `python -m training.train_gate`);
- `classifier`: `LocalGate`;
- `shared`: the one shared local gate of the process.

The cascade, which asks the LLM only when this gate is unsure, is `assistant.gates.cascade`.
Part of the gates: may import what they may (the contract, `memory`'s embeddings and
tokens); here its public names are gathered, which loads numpy but no model.
"""

from assistant.gates.local.classifier import LocalGate, featurize, featurize_texts
from assistant.gates.local.cues import FEATURE_NAMES, FEATURE_VERSION, hand_features, scan_capitals
from assistant.gates.local.rule import explicit_memory_reference
from assistant.gates.local.shared import shared_local_gate
from assistant.gates.local.text import gate_text, memory_query, unwrap
from assistant.gates.local.weights import WEIGHTS_PATH, GateWeights

__all__ = [
    "FEATURE_NAMES",
    "FEATURE_VERSION",
    "WEIGHTS_PATH",
    "GateWeights",
    "LocalGate",
    "explicit_memory_reference",
    "featurize",
    "featurize_texts",
    "gate_text",
    "hand_features",
    "memory_query",
    "scan_capitals",
    "shared_local_gate",
    "unwrap",
]
