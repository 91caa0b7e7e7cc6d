"""The v1 grammar as data (``table``); the JSON Schema generated from it is :mod:`checker.views.workflow_schema`."""
