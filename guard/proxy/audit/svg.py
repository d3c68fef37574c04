"""Small inline SVG charts for the audit report: no plotting library, no network resource.

Each function returns one ``<svg>`` element (``role="img"`` with a ``<title>``) sized
``WIDTH x HEIGHT`` that draws axes with tick labels, the data and a legend. Values are escaped;
colours come from :data:`PALETTE`.

Examples
--------
>>> svg = bar_chart(["a", "b"], {"n": [1.0, 3.0]}, title="demo", ylabel="count")
>>> svg.startswith("<svg") and svg.count('class="bar"') == 2
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 46, 44
PALETTE = ("#1f77b4", "#d62728", "#7f7f7f", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if raw <= m * step)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _fmt(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.2e}"


class _Frame:
    """Maps data to pixels inside the plot area and draws axes."""

    def __init__(self, xlim: tuple[float, float], ylim: tuple[float, float]) -> None:
        self.x0, self.x1 = xlim
        self.y0, self.y1 = ylim if ylim[1] > ylim[0] else (ylim[0], ylim[0] + 1.0)
        self.w = WIDTH - LEFT - RIGHT
        self.h = HEIGHT - TOP - BOTTOM

    def x(self, v: float) -> float:
        return LEFT + (v - self.x0) / ((self.x1 - self.x0) or 1.0) * self.w

    def y(self, v: float) -> float:
        return TOP + self.h - (v - self.y0) / (self.y1 - self.y0) * self.h

    def axes(self, title: str, xlabel: str, ylabel: str, xticks: bool = True) -> list[str]:
        out = [f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14" '
               f'font-weight="bold">{escape(title)}</text>',
               f'<line x1="{LEFT}" y1="{TOP + self.h}" x2="{LEFT + self.w}" '
               f'y2="{TOP + self.h}" stroke="#333"/>',
               f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + self.h}" stroke="#333"/>',
               f'<text x="{WIDTH / 2}" y="{HEIGHT - 6}" text-anchor="middle" '
               f'font-size="12">{escape(xlabel)}</text>',
               f'<text x="14" y="{TOP + self.h / 2}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 14 {TOP + self.h / 2})">{escape(ylabel)}</text>']
        for t in _ticks(self.y0, self.y1):
            out.append(f'<line x1="{LEFT - 4}" y1="{self.y(t):.1f}" x2="{LEFT + self.w}" '
                       f'y2="{self.y(t):.1f}" stroke="#ddd"/><text x="{LEFT - 6}" '
                       f'y="{self.y(t) + 4:.1f}" text-anchor="end" font-size="10">'
                       f'{_fmt(t)}</text>')
        if xticks:
            for t in _ticks(self.x0, self.x1):
                out.append(f'<text x="{self.x(t):.1f}" y="{TOP + self.h + 14}" '
                           f'text-anchor="middle" font-size="10">{_fmt(t)}</text>')
        return out


def _legend(names: Sequence[str]) -> list[str]:
    out, x = [], LEFT + 8
    for i, name in enumerate(names):
        out.append(f'<rect x="{x}" y="{TOP - 16}" width="10" height="10" '
                   f'fill="{PALETTE[i % len(PALETTE)]}"/><text x="{x + 14}" y="{TOP - 7}" '
                   f'font-size="11">{escape(name)}</text>')
        x += 30 + 6 * len(name)
    return out


def _svg(title: str, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH}" '
            f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">'
            f'<title>{escape(title)}</title>' + "".join(parts) + "</svg>")


def bar_chart(categories: Sequence[str], series: Mapping[str, Sequence[float]], *, title: str,
              ylabel: str, xlabel: str = "", stacked: bool = False,
              ylim: tuple[float, float] | None = None,
              labels: Sequence[str] | None = None) -> str:
    """Bars per category, one colour per series (side by side, or ``stacked``); ``labels``
    are written above the bars (e.g. ``n = 12``)."""
    names = list(series)
    k = len(categories)
    tops = [sum(series[s][i] for s in names) if stacked else max(series[s][i] for s in names)
            for i in range(k)] or [0.0]
    lows = [min(0.0, *(series[s][i] for s in names)) for i in range(k)] or [0.0]
    lo, hi = min(0.0, *lows), max(0.0, *tops)
    pad = 0.1 * ((hi - lo) or 1.0)
    frame = _Frame((0.0, float(max(k, 1))), ylim or (lo - pad if lo < 0 else 0.0,
                                                      hi + pad if hi > 0 or lo == 0 else 0.0))
    parts = frame.axes(title, xlabel, ylabel, xticks=False)
    slot = frame.w / max(k, 1)
    width = slot * 0.8 / (1 if stacked else len(names))
    for i, cat in enumerate(categories):
        base = 0.0
        for j, name in enumerate(names):
            v = float(series[name][i])
            lo, hi = (base, base + v) if stacked else (min(0.0, v), max(0.0, v))
            x = LEFT + i * slot + slot * 0.1 + (0 if stacked else j * width)
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{frame.y(hi):.1f}" '
                         f'width="{width:.1f}" height="{max(frame.y(lo) - frame.y(hi), 0):.1f}"'
                         f' fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(name)}, '
                         f'{escape(cat)}: {_fmt(v)}</title></rect>')
            base += v if stacked else 0.0
        cx = LEFT + (i + 0.5) * slot
        if k <= 16 or i % math.ceil(k / 16) == 0:
            parts.append(f'<text x="{cx:.1f}" y="{TOP + frame.h + 14}" text-anchor="middle" '
                         f'font-size="10">{escape(cat)}</text>')
        if labels is not None:  # at the tip of the bar, above it or below a negative one
            tip = frame.y(tops[i]) - 3 if tops[i] >= 0 else frame.y(lows[i]) + 11
            parts.append(f'<text x="{cx:.1f}" y="{tip:.1f}" text-anchor="middle" '
                         f'font-size="9">{escape(labels[i])}</text>')
    if lo < 0:
        parts.append(f'<line x1="{LEFT}" y1="{frame.y(0):.1f}" x2="{LEFT + frame.w}" '
                     f'y2="{frame.y(0):.1f}" stroke="#333"/>')
    return _svg(title, parts + (_legend(names) if len(names) > 1 else []))


def histogram(series: Mapping[str, Sequence[float]], *, bins: int, lo: float, hi: float,
              title: str, xlabel: str, ylabel: str = "share of decisions") -> str:
    """Overlaid histograms (as shares) of each series on ``[lo, hi]``; values outside are
    counted in the first or last bin."""
    names = list(series)
    shares: dict[str, list[float]] = {}
    for name in names:
        counts = [0] * bins
        for v in series[name]:
            counts[min(max(int((v - lo) / (hi - lo) * bins), 0), bins - 1)] += 1
        total = max(sum(counts), 1)
        shares[name] = [c / total for c in counts]
    top = max((max(v) for v in shares.values()), default=1.0) or 1.0
    frame = _Frame((lo, hi), (0.0, top * 1.1))
    parts = frame.axes(title, xlabel, ylabel)
    width = (hi - lo) / bins
    for j, name in enumerate(names):
        for i, share in enumerate(shares[name]):
            x0, x1 = frame.x(lo + i * width), frame.x(lo + (i + 1) * width)
            parts.append(f'<rect class="bar" x="{x0:.1f}" y="{frame.y(share):.1f}" '
                         f'width="{x1 - x0:.1f}" height="{frame.y(0) - frame.y(share):.1f}" '
                         f'fill="{PALETTE[j % len(PALETTE)]}" fill-opacity="0.5" '
                         f'stroke="{PALETTE[j % len(PALETTE)]}"/>')
    return _svg(title, parts + _legend(names))


def scatter(groups: Mapping[str, Sequence[tuple[float, float]]], *, title: str, xlabel: str,
            ylabel: str, xlim: tuple[float, float], ylim: tuple[float, float],
            diagonal: bool = False) -> str:
    """Points, one colour per group, with the line ``y = x`` when ``diagonal``."""
    frame = _Frame(xlim, ylim)
    parts = frame.axes(title, xlabel, ylabel)
    if diagonal:
        a, b = max(xlim[0], ylim[0]), min(xlim[1], ylim[1])
        parts.append(f'<line x1="{frame.x(a):.1f}" y1="{frame.y(a):.1f}" x2="{frame.x(b):.1f}" '
                     f'y2="{frame.y(b):.1f}" stroke="#333" stroke-dasharray="4 3"/>')
    for j, points in enumerate(groups.values()):
        for x, y in points:
            cx = frame.x(min(max(x, xlim[0]), xlim[1]))
            cy = frame.y(min(max(y, ylim[0]), ylim[1]))
            parts.append(f'<circle class="point" cx="{cx:.1f}" cy="{cy:.1f}" r="2.5" '
                         f'fill="{PALETTE[j % len(PALETTE)]}" fill-opacity="0.6"/>')
    return _svg(title, parts + _legend(list(groups)))
