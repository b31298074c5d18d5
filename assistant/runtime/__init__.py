"""The model runtime: every way a reply or a decision reaches a model, the built-in one too.

- `llm`: the anthropic client (built lazily) and one way to call it;
- `completion`: a model call's outcome: its reply, its streamed text, its classified errors;
- `llama_slot`: a reply pinned to a llama.cpp slot (compare mode's twins);
- `local_model`: llama.cpp's server in a child process on 127.0.0.1; `llama_server` is
  the child's side (`python -m assistant.runtime.llama_server`);
- `child_server`: a server in a child process: a free port, its health check, stopping it;
- `model_file`: the default GGUF, assembled from its slices and checked before loading
  (`python -m assistant.runtime.model_file`, which `make demo` runs);
- `fake_api`: a fake Messages API server for tests (ships on purpose: docs/testing.md).

May import the leaves (`assistant.text`, `assistant.config`) and `memory`; nothing above
them: the gates, the reply and the turn reach models through this package, never the
other way round. Nothing is imported here, so the anthropic SDK and llama.cpp load only
when a client or a server is made.
"""
