"""Pure judgements on media builtin arguments shared by `nika check` (literal values) and the runtime."""
