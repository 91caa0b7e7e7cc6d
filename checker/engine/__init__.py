"""The checking pipeline (``pipeline``) and the language server's incremental analysis
(``incremental``)."""
