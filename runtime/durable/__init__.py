"""Durability (ADR-099): the human gate and its tickets, the effects a gate unleashes, opening a
trace to resume (the resume index) and matching each task of the new run against it."""
