"""schema.org microdata as the W3C item model (HTML §microdata): each top-level ``itemscope``
becomes ``{type?, id?, properties: {name: [value, …]}}``, a nested ``itemscope`` property an item
of its own, URL-valued properties absolute. ``itemref`` pulls in properties by id."""

from __future__ import annotations

from typing import Any

from runtime.extract.document import absolute

_URL_ATTR = {
    "a": "href",
    "area": "href",
    "link": "href",
    "audio": "src",
    "embed": "src",
    "iframe": "src",
    "img": "src",
    "source": "src",
    "track": "src",
    "video": "src",
    "object": "data",
}
MAX_DEPTH = 16


def items(tree: Any, base: str) -> list[dict[str, Any]]:
    return [_item(n, tree, base, 0) for n in tree.css("[itemscope]") if "itemprop" not in n.attributes]


def _item(node: Any, tree: Any, base: str, depth: int) -> dict[str, Any]:
    attrs = node.attributes
    out: dict[str, Any] = {}
    types = (attrs.get("itemtype") or "").split()
    if types:
        out["type"] = types
    if attrs.get("itemid"):
        out["id"] = absolute(base, attrs["itemid"])
    props: dict[str, list[Any]] = {}
    roots = [node]
    for ref in (attrs.get("itemref") or "").split():
        target = tree.css_first(f'[id="{ref}"]')
        if target is not None:
            roots.append(target)
    for root in roots:
        for prop in _properties(root, include_self=root is not node):
            value = _value(prop, tree, base, depth)
            for name in (prop.attributes.get("itemprop") or "").split():
                props.setdefault(name, []).append(value)
    out["properties"] = props
    return out


def _properties(root: Any, *, include_self: bool) -> list[Any]:
    """The ``itemprop`` elements that belong to ``root``'s item: not inside a nested scope."""
    found: list[Any] = []
    if include_self and "itemprop" in root.attributes:
        found.append(root)
        if "itemscope" in root.attributes:
            return found
    stack = list(_children(root))
    while stack:
        n = stack.pop(0)
        if "itemprop" in n.attributes:
            found.append(n)
        if "itemscope" not in n.attributes:
            stack[0:0] = list(_children(n))
    return found


def _children(node: Any) -> list[Any]:
    return [c for c in node.iter(include_text=False) if c.tag and not c.tag.startswith("-")]


def _value(node: Any, tree: Any, base: str, depth: int) -> Any:
    attrs = node.attributes
    if "itemscope" in attrs:
        return _item(node, tree, base, depth + 1) if depth < MAX_DEPTH else {}
    tag = node.tag
    if tag == "meta":
        return attrs.get("content") or ""
    if tag in _URL_ATTR:
        return absolute(base, attrs.get(_URL_ATTR[tag])) or ""
    if tag in ("data", "meter"):
        return attrs.get("value") or ""
    if tag == "time" and attrs.get("datetime"):
        return attrs["datetime"]
    return " ".join(node.text(deep=True).split())
