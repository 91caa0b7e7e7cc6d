"""Helpers the rules share that are not rules themselves: the rule context, value flow, the
parsed words of an ``exec:`` and machine fixes."""
