"""Products computed from a compiled workflow that no rule needs: the plan, the symbol index and
the certificate."""
