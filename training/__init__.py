"""Training for the local gate: data, generator, importer and trainer (not shipped)."""
