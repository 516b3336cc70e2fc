"""Inline SVG line charts, generated on the server (no JavaScript): a value per revision.

Round y ticks from zero, x labels thinned so that they never overlap, and a legend that carries
each series' latest value (a reader should not have to hover a point to read the current figure).

The chart is as wide as its container at any width, and its text keeps its CSS size (12 px) at
every width: the outer `<svg>` has no viewBox (a user unit is a CSS pixel), x positions are
percentages of the width, y positions pixels; only the lines sit in an inner `<svg>` stretched to
the plot (`preserveAspectRatio="none"`, strokes `non-scaling-stroke`). The x labels come in two
thinnings, one for a phone and one for a wider column, switched by the stylesheet. The legend is
HTML below the plot, wrapping like text. A chart whose every series holds one value throughout
says so in one line instead of drawing a flat line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

__all__ = ["PALETTE_SIZE", "Series", "flat_value", "line_chart", "nice_ticks", "thinned"]

PALETTE_SIZE = 7  # the stylesheet's colour classes c0…c6 (svg.chart and ul.legend)
_TOP = 44  # the title above, the top tick's label just above its grid line
_PLOT_H = 160
_INSET = 8.0  # per cent of the width: the first and last points sit this far in, so their labels fit
_CHAR_W = 7.2  # average advance of a 12px sans-serif glyph, for laying labels out without a browser
_LABEL_GAP = 16
# plot widths (px) the two label thinnings are laid out for: the narrowest phone column (320 px
# screen), and the narrowest column that shows the wide thinning (the stylesheet's 700 px breakpoint)
NARROW_PX, WIDE_PX = 290, 650


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float | None, ...]  # one per x label; None where unknown


def nice_ticks(hi: float, target: int = 4) -> list[float]:
    """Round tick values from 0 up to at least `hi` (steps of 1, 2 or 5 × 10^k)."""
    if hi <= 0:
        return [0.0, 1.0]
    raw = hi / target
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    count = math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) for i in range(count + 1)]


def _tidy(label: str) -> str:
    """`400.00 GB` → `400 GB`, `2.50 B` → `2.5 B` (tick labels are round numbers)."""
    return re.sub(r"(\d)\.(\d*?)0+(?=\D|$)", lambda m: m.group(1) + (f".{m.group(2)}" if m.group(2) else ""), label)


def _text_w(text: str) -> float:
    return len(text) * _CHAR_W


def thinned(labels: Sequence[str], plot_px: float) -> set[int]:
    """Indices of the x labels shown on a plot `plot_px` wide: evenly spaced, never overlapping,
    the newest revision always labelled."""
    n = len(labels)
    if n == 0:
        return set()
    widest = max(_text_w(label) for label in labels) + _LABEL_GAP
    spacing = plot_px * (100 - 2 * _INSET) / 100 / (n - 1) if n > 1 else plot_px
    step = max(1, math.ceil(widest / spacing))
    return set(range(n - 1, -1, -step))


def flat_value(series: Series) -> float | None:
    """The one value `series` takes wherever it is known, or None when it changes (or is never known)."""
    known = {v for v in series.values if v is not None}
    return known.pop() if len(known) == 1 else None


def _flat_line(title: str, series: Sequence[Series], values: Sequence[float], fmt: Callable[[float], str],
               n: int) -> Markup:
    known = max(sum(v is not None for v in s.values) for s in series)
    where = ("at the only revision" if n == 1 else "at every revision" if known == n
             else f"at every revision with an estimate ({known} of {n})")
    if len(series) == 1:
        return Markup('<p class="chart-flat">{}: <strong>{}</strong> {}</p>').format(
            series[0].name, fmt(values[0]), where)
    items = Markup(" · ").join(
        Markup("{} <strong>{}</strong>").format(s.name, fmt(v)) for s, v in zip(series, values, strict=True))
    topic = title.removesuffix(" per revision")
    return Markup('<p class="chart-flat">{}, {}: {}</p>').format(topic, where, items)


def line_chart(
    title: str, x_labels: Sequence[str], series: Sequence[Series], fmt: Callable[[float], str]
) -> Markup:
    """An accessible SVG chart of `series` over `x_labels` in a <figure> with its legend; one line of
    text when every series is flat; an empty Markup when nothing is known."""
    known = [v for s in series for v in s.values if v is not None]
    if not known or not x_labels:
        return Markup("")
    shown_series = [s for s in series if any(v is not None for v in s.values)]
    flats = [flat_value(s) for s in shown_series]
    if all(v is not None for v in flats):
        return _flat_line(title, shown_series, [v for v in flats if v is not None], fmt, len(x_labels))
    ticks = nice_ticks(max(max(known), 0.0))
    hi = ticks[-1]
    n = len(x_labels)
    axis_y = _TOP + _PLOT_H
    height = axis_y + 26

    def x_pct(i: int) -> float:
        span = 100 - 2 * _INSET
        return _INSET + (span * i / (n - 1) if n > 1 else span / 2)

    def y_px(v: float) -> float:  # from the plot's top
        return _PLOT_H - v * _PLOT_H / hi

    parts = [
        Markup('<figure class="chart"><svg class="chart" width="100%" height="{h}" role="img" aria-label="{t}" '
               'xmlns="http://www.w3.org/2000/svg">').format(h=height, t=title),
        Markup("<title>{}</title>").format(title),
        Markup('<text x="8" y="20" class="chart-title">{}</text>').format(title),
    ]
    tick_labels: list[Markup] = []  # drawn last, over the lines (with a white halo)
    for value in ticks:
        y = _TOP + y_px(value)
        parts.append(Markup('<line x1="0" y1="{:.1f}" x2="100%" y2="{:.1f}" class="grid"/>').format(y, y))
        tick_labels.append(Markup('<text x="4" y="{:.1f}" class="axis tick">{}</text>').format(y - 4, _tidy(fmt(value))))
    narrow, wide = thinned(x_labels, NARROW_PX), thinned(x_labels, WIDE_PX)
    for i in sorted(narrow | wide):
        where = "" if i in narrow and i in wide else " narrow-only" if i in narrow else " wide-only"
        parts.append(Markup('<text x="{:.2f}%" y="{}" class="axis{}" text-anchor="middle">{}</text>').format(
            x_pct(i), axis_y + 18, where, x_labels[i]))
    lines = []
    for index, s in enumerate(shown_series):
        points = [(x_pct(i), y_px(v), v, i) for i, v in enumerate(s.values) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x * 10:.1f},{y:.1f}" for x, y, _, _ in points)
            lines.append(Markup('<polyline points="{}" class="line c{}" vector-effect="non-scaling-stroke"/>').format(
                path, index % PALETTE_SIZE))
    parts.append(Markup('<svg x="0" y="{}" width="100%" height="{}" viewBox="0 0 1000 {}" '
                        'preserveAspectRatio="none" overflow="visible">').format(_TOP, _PLOT_H, _PLOT_H))
    parts.extend(lines)
    parts.append(Markup("</svg>"))
    radius = 3.5 if n <= 30 else 2.5 if n <= 80 else 1.5  # dense histories: dots, not a thick bar
    for index, s in enumerate(shown_series):
        for i, v in enumerate(s.values):
            if v is not None:
                parts.append(Markup(
                    '<circle cx="{:.2f}%" cy="{:.1f}" r="{}" class="c{}"><title>{} @ {}: {}</title></circle>'
                ).format(x_pct(i), _TOP + y_px(v), radius, index % PALETTE_SIZE, s.name, x_labels[i], fmt(v)))
    parts.extend(tick_labels)
    parts.append(Markup('</svg><figcaption><ul class="legend">'))
    for index, s in enumerate(shown_series):
        latest = next((v for v in reversed(s.values) if v is not None), None)
        parts.append(Markup('<li><span class="swatch c{}"></span>{}</li>').format(
            index % PALETTE_SIZE, f"{s.name}: {fmt(latest)}" if latest is not None else s.name))
    parts.append(Markup("</ul></figcaption></figure>"))
    return Markup("").join(parts)
