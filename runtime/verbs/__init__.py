"""The four verbs: ``exec``, ``infer``, ``invoke`` (``agent`` is not built yet)."""
