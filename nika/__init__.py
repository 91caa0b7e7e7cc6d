"""Nika tooling: the command-line interface and its output formats."""
