"""The v1 grammar as data (``table``) and the JSON Schema generated from it (``json_schema``)."""
