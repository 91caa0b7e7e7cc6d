"""Tool plumbing the verbs share: the MCP client and its server table, jq (the front and its killable
worker processes), JSON Schema validation and ``returns:`` lowered to a schema, the process runner and the
process warden."""
