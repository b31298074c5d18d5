"""The reply: what the user reads after the gate has decided, and what is kept of it.

- `respond`: replies from the chat model, streamed, the memories quoted as data beside
  each message;
- `hours`: a clock time the model might misread, said again in its copy of a fact;
- `offline`: the last-resort responder: quotes memories, computes arithmetic (no eval);
- `capture`: facts the user stated, grounded in their words, saved after the reply.

May import the leaves (`assistant.text`, `assistant.config`), the model runtime
(`assistant.runtime`), `assistant.conversation` and `memory`. Not the gates, its sibling
(neither imports the other), nor the turn, which calls both. Nothing is imported here.
"""
