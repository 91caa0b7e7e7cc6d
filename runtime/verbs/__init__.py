"""The verbs ``exec``, ``infer`` and ``invoke`` (``agent``, the tool-calling loop, is :mod:`runtime.agent`)."""
