"""Foundations every stage shares: records, source text and positions, findings, the code
registry, closed vocabularies, did-you-mean, display bounds, durations and the one glob matcher."""
