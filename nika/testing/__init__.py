"""Workflow tests: the test file format, the runner, the reports (``nika test``)."""
