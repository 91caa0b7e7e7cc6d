"""A minimal SVG writer: elements in the order they are added, attributes in the order given,
XML-escaped text, ``\\n`` line ends, no timestamp, no generator comment, no font embedding, so the
bytes depend on the drawing alone."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from runtime.media.chart_scale import num


class Svg:
    def __init__(self, width: int, height: int, title: str) -> None:
        self.width, self.height = width, height
        self.parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
            f' viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
            f"<title>{escape(title)}</title>",
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        ]

    def add(self, tag: str, text: str | None = None, **attrs: float | str) -> None:
        body = "".join(f" {k.rstrip('_').replace('_', '-')}={quoteattr(_attr(v))}" for k, v in attrs.items())
        if text is None:
            self.parts.append(f"<{tag}{body}/>")
        else:
            self.parts.append(f"<{tag}{body}>{escape(text)}</{tag}>")

    def open(self, tag: str, **attrs: float | str) -> None:
        body = "".join(f" {k.rstrip('_').replace('_', '-')}={quoteattr(_attr(v))}" for k, v in attrs.items())
        self.parts.append(f"<{tag}{body}>")

    def close(self, tag: str) -> None:
        self.parts.append(f"</{tag}>")

    def bytes(self) -> bytes:
        return ("\n".join([*self.parts, "</svg>"]) + "\n").encode("utf-8")


def _attr(v: float | str) -> str:
    return v if isinstance(v, str) else num(v)


def points(xy: list[tuple[float, float]]) -> str:
    return " ".join(f"{num(x)},{num(y)}" for x, y in xy)
