"""Durability (ADR-099): the human gate and its tickets, the effects a gate unleashes, and opening a
trace to resume (the resume index); the run's side of a resume (matching each task against the index)
is :mod:`runtime.engine.resume_match`."""
