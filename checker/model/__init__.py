"""The compiled model: the immutable workflow (``workflow``), its task graph (``graph``) and the
type core of spec 09 (``typesys``)."""
