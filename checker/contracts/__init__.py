"""Per-tool argument contracts and the effect table, written once as data (the ``*.toml`` files
beside this package) and read by the checker, completion, hover, the runtime and the agent."""
