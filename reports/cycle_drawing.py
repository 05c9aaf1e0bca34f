"""Where the boxes and arrows of a dependency cycle go: the geometry of the report's cycle drawings.

A cycle of n transactions is laid out as n labelled boxes on a circle (two side by side, one alone), in
the cycle's order, clockwise from the top. Each edge is a quadratic curve that bows away from the circle's
centre, so two edges between the same pair (a two-transaction cycle) never overlap, and ends in an
arrowhead at the box it points to; its label sits just outside the curve's middle. The drawing is plain
numbers here; ``templates/_txn.html.j2`` turns it into inline SVG (autoescaped), so this module knows
nothing of markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

CHAR_W = 7.6
"""Estimated width of one character of the drawing's 12.5 px monospace font."""
BOX_H = 30.0
MARGIN = 16.0
MIN_RADIUS = 90.0
LABEL_GAP = 12.0


@dataclass(frozen=True)
class EdgeSpec:
    """One edge to draw: from the ``source``-th node to the ``target``-th, with its label.

    Attributes:
        source: index of the node it leaves.
        target: index of the node it enters.
        kind: the edge type (ww, wr, rw, process, realtime), for its colour.
        label: the words on it ("rw k4").
        title: the tooltip (the edge's sentence).
    """

    source: int
    target: int
    kind: str
    label: str
    title: str = ""


@dataclass(frozen=True)
class Box:
    """A transaction's box: top-left corner, size, label and tooltip."""

    x: float
    y: float
    w: float
    h: float
    label: str
    title: str
    key: str
    """The transaction's id as text, for tests and links."""

    @property
    def cx(self) -> float:
        """The box's centre, x."""
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        """The box's centre, y."""
        return self.y + self.h / 2


@dataclass(frozen=True)
class Arrow:
    """An edge's curve and where its label goes.

    Attributes:
        points: the curve's start, control point(s) and end: three points make a quadratic curve, four a
            cubic one (a transaction's edge to itself).
        kind: the edge type, for its colour.
        label: the words on it.
        title: its tooltip.
        label_x: where its label is anchored, x.
        label_y: the label's baseline, y.
        anchor: the label's ``text-anchor`` (start, middle or end), so it grows away from the curve.
    """

    points: tuple[tuple[float, float], ...]
    kind: str
    label: str
    title: str
    label_x: float
    label_y: float
    anchor: str

    @property
    def d(self) -> str:
        """The curve as an SVG path."""
        (x0, y0), *rest = self.points
        cmd = "Q" if len(rest) == 2 else "C"
        return f"M {x0:.1f} {y0:.1f} {cmd} " + " ".join(f"{x:.1f} {y:.1f}" for x, y in rest)

    def moved(self, ox: float, oy: float) -> Arrow:
        """The same arrow shifted by (ox, oy)."""
        return Arrow(tuple((x + ox, y + oy) for x, y in self.points), self.kind, self.label, self.title,
                     self.label_x + ox, self.label_y + oy, self.anchor)


@dataclass(frozen=True)
class CycleDrawing:
    """A whole drawing: its size (the SVG's viewBox is ``0 0 width height``), boxes and arrows."""

    width: float
    height: float
    boxes: list[Box]
    arrows: list[Arrow]


def _text_w(text: str) -> float:
    return len(text) * CHAR_W


def _clip(cx: float, cy: float, w: float, h: float, tx: float, ty: float) -> tuple[float, float]:
    """Where the ray from a box's centre toward (tx, ty) leaves the box (padded by 3 px)."""
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return cx, cy
    hw, hh = w / 2 + 3, h / 2 + 3
    scale = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return cx + dx * scale, cy + dy * scale


def _centres(n: int, radius: float) -> list[tuple[float, float]]:
    start = math.pi if n == 2 else -math.pi / 2
    return [(radius * math.cos(start + 2 * math.pi * i / n), radius * math.sin(start + 2 * math.pi * i / n))
            for i in range(n)]


def _anchor(nx: float) -> str:
    if nx > 0.35:
        return "start"
    if nx < -0.35:
        return "end"
    return "middle"


def _self_loop(box: Box, edge: EdgeSpec) -> Arrow:
    x0, x1, top = box.x + box.w * 0.3, box.x + box.w * 0.7, box.y - 3
    points = ((x0, top), (x0 - 20, top - 50), (x1 + 20, top - 50), (x1, top))
    return Arrow(points, edge.kind, edge.label, edge.title, box.cx, top - 44, "middle")


def _arrow(a: Box, b: Box, edge: EdgeSpec, n: int) -> Arrow:
    if a is b:
        return _self_loop(a, edge)
    mx, my = (a.cx + b.cx) / 2, (a.cy + b.cy) / 2
    dx, dy = b.cx - a.cx, b.cy - a.cy
    chord = math.hypot(dx, dy) or 1.0
    nx, ny = mx, my  # outward from the circle's centre, the origin
    if n <= 2 or math.hypot(nx, ny) < 1e-6:
        nx, ny = dy, -dx  # left of the direction of travel: the two edges of a pair bow apart
    norm = math.hypot(nx, ny) or 1.0
    nx, ny = nx / norm, ny / norm
    bow = max(28.0, chord * 0.16)
    qx, qy = mx + nx * bow, my + ny * bow
    x0, y0 = _clip(a.cx, a.cy, a.w, a.h, qx, qy)
    x2, y2 = _clip(b.cx, b.cy, b.w, b.h, qx, qy)
    midx, midy = 0.25 * x0 + 0.5 * qx + 0.25 * x2, 0.25 * y0 + 0.5 * qy + 0.25 * y2
    return Arrow(((x0, y0), (qx, qy), (x2, y2)), edge.kind, edge.label, edge.title, midx + nx * LABEL_GAP,
                 midy + ny * LABEL_GAP + 4, _anchor(nx))


def _radius(n: int, box_w: float, label_w: float) -> float:
    if n <= 1:
        return 0.0
    need = box_w + max(60.0, label_w * 0.6)  # room between neighbours for the edge and its label
    return max(MIN_RADIUS, need / (2 * math.sin(math.pi / n)))


def draw_cycle(labels: Sequence[str], edges: Sequence[EdgeSpec], *, titles: Sequence[str] = (),
               keys: Sequence[str] = ()) -> CycleDrawing:
    """Lay out boxes labelled ``labels`` on a circle and the ``edges`` between them.

    Args:
        labels: one label per node, in the cycle's order ("T12 (p3)").
        edges: the arrows; an edge naming a node out of range is dropped.
        titles: a tooltip per node (its micro-ops), optional.
        keys: an id per node (the transaction's id as text), optional.

    Returns:
        The drawing, translated so that everything lies inside ``0..width`` and ``0..height``.
    """
    n = len(labels)
    box_w = max([_text_w(lab) + 20 for lab in labels] or [60.0])
    label_w = max([_text_w(e.label) for e in edges] or [0.0])
    centres = _centres(n, _radius(n, box_w, label_w))
    raw = [Box(cx - box_w / 2, cy - BOX_H / 2, box_w, BOX_H, lab, titles[i] if i < len(titles) else "",
               keys[i] if i < len(keys) else str(i))
           for i, ((cx, cy), lab) in enumerate(zip(centres, labels, strict=True))]
    arrows = [_arrow(raw[e.source], raw[e.target], e, n) for e in edges if 0 <= e.source < n and 0 <= e.target < n]
    xs = [b.x for b in raw] + [b.x + b.w for b in raw]
    ys = [b.y for b in raw] + [b.y + b.h for b in raw]
    for a in arrows:
        w = _text_w(a.label)
        left = {"start": 0.0, "middle": w / 2, "end": w}[a.anchor]
        xs += [a.label_x - left, a.label_x - left + w]
        ys += [a.label_y - 14, a.label_y + 4]
        xs += [x for x, _ in a.points]
        ys += [y for _, y in a.points]
    if not xs:
        return CycleDrawing(2 * MARGIN, 2 * MARGIN, [], [])
    ox, oy = MARGIN - min(xs), MARGIN - min(ys)
    boxes = [Box(b.x + ox, b.y + oy, b.w, b.h, b.label, b.title, b.key) for b in raw]
    moved = [a.moved(ox, oy) for a in arrows]
    return CycleDrawing(round(max(xs) - min(xs) + 2 * MARGIN, 1), round(max(ys) - min(ys) + 2 * MARGIN, 1),
                        boxes, moved)
