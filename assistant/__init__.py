"""Memory Gate's assistant: a chat that asks, before every reply, whether memory is needed.

Its packages, from the leaves up (docs/how-it-works.md, "Layers"): `text` and `config`;
`runtime/`, every way to a model; `conversation/`, follow-ups; `gates/`, the decision;
`reply/`, the reply and capture; `turn/`, one turn and the `Assistant` front; `page/`,
the page's helpers, `eval/`, the evaluations, and `talk`, a talk rehearsed; `cli`, the
`memory-gate` command. Each imports only the ones before it. Nothing is imported here.
"""
