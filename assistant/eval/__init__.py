"""Evaluations: `python -m assistant.eval recall ...` and `python -m assistant.eval gate ...`."""
