"""The YAML stage: text -> the span-carrying value tree with the Nika YAML profile enforced,
and plain words for YAML syntax errors."""
