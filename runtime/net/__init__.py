"""The engine's network floor: the address judge every outgoing request passes (SSRF defence)."""
