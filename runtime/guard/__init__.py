"""Effect guards of a run: admission (compile once, refuse, bind inputs), permits at the moment
of the effect, ``policy:`` re-judged, the one redactor, secrets and the local vault, the cost cap, and every
limit of the model verbs."""
