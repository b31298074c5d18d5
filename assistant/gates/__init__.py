"""The retrieval gates: does this message need the user's long-term memory?

- `base`: the contract every gate keeps (`GateDecision`, `Method`, `Gate`, `Conversation`,
  `bounded`, failing open); the modes' names are `assistant.config.GateMode`;
- `llm`: the seed's LLM gate (`LlmGate`, `should_retrieve`), over any Messages endpoint;
- `native`: the LLM gate on our own llama.cpp server, its reply held to a grammar;
- `local/`: the offline classifier over MiniLM embeddings and text cues;
- `cascade`: the local gate first, the LLM's vote where it was measured to help;
- `trust`: what the LLM gate was measured to be worth, per model;
- `rules`: the fixed baselines always, never and length;
- `corrections/`: the user's corrections of the gate: the gate that applies them, the
  "Wrong decision?" button's actions, and their command line;
- `vocabulary`: a judged skip that names what the user's memories mention retrieves;
- `labels`: labelled messages, the gate-eval format the evaluations and corrections read;
- `followup`: the chain's last step: a follow-up's decision read with the exchange it
  continues (the reading itself is `assistant.conversation`);
- `forced`: a decision made before the turn (a re-run after a correction);
- `registry`: how each mode is built, and the one decision chain (corrections -> gate ->
  vocabulary -> conversation) the pipeline asks.

May import the leaves (`assistant.text`, `assistant.config`), the model runtime, the
conversation and `memory`. Not the reply, its sibling (neither imports the other), nor the
turn, which asks the chain. Nothing is imported here: importing `assistant.gates.base`
stays a small cost.
"""
