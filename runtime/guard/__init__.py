"""Effect guards of a run: permits at the moment of the effect, ``policy:`` re-judged, the one
redactor, secrets and the local vault, and every limit of the model verbs."""
