"""The turn, end to end, and the one front the page and the evaluations talk to.

- `pipeline`: one turn: the gate chain's decision -> memory search (only on yes) ->
  streamed reply -> `Turn` (capture on request);
- `chat`: the home of a message: readiness, the turn, compare mode's twin, capture once,
  notices, a failed exchange that keeps the message -> `Exchange`;
- `wiring`: what answers (client, pipeline, gates, corrections) as one immutable
  snapshot, and the `Switchboard` that swaps in an offline one when the local model fails;
- `front`: `Assistant`, the one front of the UI and the evaluations;
- `factory`: builds the `Assistant` once per process from settings.

May import every layer below it: the leaves, the model runtime, the conversation, the
gates, the reply and `memory`; never the page, the evaluations or the commands above.
Nothing is imported here: the SDK, Chroma and llama.cpp load when an assistant is built.
"""
