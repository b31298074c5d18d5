"""Evaluations: `python -m assistant.eval recall|gate|load ...`."""
