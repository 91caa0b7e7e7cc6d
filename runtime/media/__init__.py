"""Renderers and codecs of the media builtins (chart SVG, PNG, image effects, audio), kept pure:
bytes in, bytes out, no I/O; the builtins in :mod:`runtime.builtins` judge and do the file effects."""
