"""One module per LSP feature family; each exposes pure functions of a document snapshot."""
