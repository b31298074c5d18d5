"""Servers the tests (and the memory benchmark) start: a Chroma server, a store worker."""
