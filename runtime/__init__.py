"""The Nika runtime: executes exactly the compiled model ``nika check`` judged (check ≡ run).

Nothing here re-reads YAML or re-parses an expression: the runtime walks
:class:`checker.model.workflow.CompiledWorkflow` objects and the parsed templates they carry, and checks
every tool's arguments through the same contract data the checker uses (:mod:`checker.contracts.tables`).
"""
