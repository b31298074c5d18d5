"""The long-term memory store: local Chroma with offline embeddings."""
