"""The Nika language server: the checker's verdicts while typing, plus navigation and editing aids.

Everything here is an edge over :mod:`checker`: documents are compiled by the same engine that
``nika check`` runs, and positions are converted to the client's encoding only in
:mod:`nika_lsp.convert`.
"""
