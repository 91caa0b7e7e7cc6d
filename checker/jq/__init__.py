"""jq as the runtime runs it: the recogniser (``syntax``) and the predefined functions (``builtins``)."""
