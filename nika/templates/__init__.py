"""Package data: the starter project files and the workflow templates of ``nika init``/``nika new``."""
