"""Typeset report pages: headings, wrapped paragraphs, label-value facts, tables with units, callouts.

A :class:`Page` is an A4 figure filled from the top down. Every block is drawn, measured with the Agg
renderer and the cursor moved below it, so text never overlaps whatever its length. Pages hold
proportional text, never a monospace dump, and tables are drawn as tables (header rule, aligned
numbers, a highlighted row) rather than as printed frames.

>>> page = Page("Title", "a subtitle")
>>> page.paragraph("Some words. " * 40)
>>> page.table(pd.DataFrame({"servers": [4, 6], "p99 (ms)": [250.5, 190.25]}), highlight=1)
>>> 0.0 < page.y < 0.9
True
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from workbench.analysis.figure import InlineFigure

__all__ = ["A4_LANDSCAPE", "A4_PORTRAIT", "Page", "fitted", "plot_page"]

A4_PORTRAIT = (8.27, 11.69)
A4_LANDSCAPE = (11.69, 8.27)
_INK = "#1a1a1a"
_ACCENT = "#1f4e79"
_MUTED = "#555555"
_NUMBERLIKE = re.compile(r"^[-+\u2013]?[\d,.]+ ?%?$|^\u2013$")
_BOXES = {"note": ("#eef3f8", _ACCENT), "good": ("#eaf5ea", "#2e7d32"), "warn": ("#fdf1e6", "#b35900"),
          "bad": ("#fbeaea", "#b71c1c")}


class Page:
    """One A4 page built top to bottom; :attr:`fig` is the finished figure.

    Parameters
    ----------
    title, subtitle
        The page's heading and a muted line under it.
    size
        Page size in inches (portrait A4 by default).
    margin
        Left and right margin, share of the page width.
    scale
        Multiplies the font size of every block (not the title): :func:`fitted` lowers it until a
        page's content fits.
    """

    def __init__(self, title: str, subtitle: str = "", size: tuple[float, float] = A4_PORTRAIT,
                 margin: float = 0.07, scale: float = 1.0) -> None:
        self.scale = scale
        self.fig: Figure = InlineFigure(figsize=size)
        FigureCanvasAgg(self.fig)
        self._renderer = self.fig.canvas.get_renderer()  # type: ignore[attr-defined]
        self.left, self.right = margin, 1.0 - margin
        self.y = 1.0 - 0.045 * A4_PORTRAIT[1] / size[1]
        self._text(title, size=17, weight="bold", color=_ACCENT)
        if subtitle:
            self._text(subtitle, size=9, color=_MUTED)
        self.space(0.006)

    # -- measuring ----------------------------------------------------------------------------------
    def _height(self, artist: Text) -> float:
        """Height of a drawn text in figure fractions."""
        return float(artist.get_window_extent(self._renderer).height) / float(self.fig.bbox.height)

    def _width(self, artist: Text) -> float:
        return float(artist.get_window_extent(self._renderer).width) / float(self.fig.bbox.width)

    def _chars(self, size: float, width: float, bold: bool = False) -> int:
        """Characters per line of ``width`` (figure fraction) at ``size`` points (DejaVu Sans: ~0.5 em a
        character, ~0.58 em in bold)."""
        inches = width * float(self.fig.get_figwidth())
        return max(20, int(inches * 72.0 / (size * (0.58 if bold else 0.5))))

    def _text(self, text: str, *, x: float | None = None, size: float = 9.5, width: float | None = None,
              gap: float = 0.004, **style: object) -> Text:
        left = self.left if x is None else x
        bold = style.get("weight") == "bold"
        wrapped = "\n".join(textwrap.fill(part, self._chars(size, width or (self.right - left), bold))
                            for part in text.split("\n"))
        artist = self.fig.text(left, self.y, wrapped, fontsize=size, va="top", ha="left",
                               color=style.pop("color", _INK), linespacing=1.35, **style)  # type: ignore[arg-type]
        self.y -= self._height(artist) + gap
        return artist

    # -- blocks -------------------------------------------------------------------------------------
    def space(self, fraction: float) -> None:
        """Leave ``fraction`` of the page height empty."""
        self.y -= fraction

    def heading(self, text: str) -> None:
        """A section heading with a thin rule under it."""
        self.space(0.008)
        self._text(text, size=12, weight="bold", color=_ACCENT, gap=0.002)
        self.fig.add_artist(_rule(self.left, self.right, self.y + 0.001))
        self.space(0.006)

    def paragraph(self, text: str, *, size: float = 9.5, color: str = _INK, weight: str = "normal") -> None:
        """Wrapped proportional text; ``\\n`` starts a new line."""
        self._text(text, size=size * self.scale, color=color, weight=weight, gap=0.006)

    def bullets(self, items: Sequence[str], *, size: float = 9.5) -> None:
        """A bulleted list, each item wrapped under its own indent."""
        size *= self.scale
        for item in items:
            top = self.y
            self.fig.text(self.left + 0.01, top, "\u2022", fontsize=size, va="top", color=_ACCENT)
            self._text(item, x=self.left + 0.03, size=size, gap=0.004)
        self.space(0.003)

    def facts(self, rows: Sequence[tuple[str, str]], *, size: float = 9.5, label_width: float = 0.2) -> None:
        """Label-value rows: the label in bold on the left, the value wrapped beside it."""
        size *= self.scale
        for label, value in rows:
            top = self.y
            self.fig.text(self.left, top, label, fontsize=size, va="top", weight="bold", color=_INK)
            x = self.left + label_width
            self._text(value, x=x, size=size, width=self.right - x, gap=0.005)
            self.y = min(self.y, top - 0.018)
        self.space(0.004)

    def callout(self, text: str, kind: str = "note", *, size: float = 10.0, weight: str = "normal") -> None:
        """Text in a tinted box with a coloured left bar (``note``, ``good``, ``warn`` or ``bad``)."""
        fill, bar = _BOXES[kind]
        size *= self.scale
        top = self.y
        self.space(0.006)
        artist = self._text(text, x=self.left + 0.02, size=size, weight=weight, width=self.right - self.left - 0.035,
                            gap=0.0)
        artist.set_zorder(3)
        self.space(0.008)
        height = top - self.y
        self.fig.add_artist(Rectangle((self.left, self.y), self.right - self.left, height,
                                      transform=self.fig.transFigure, facecolor=fill, edgecolor="none", zorder=1))
        self.fig.add_artist(Rectangle((self.left, self.y), 0.006, height, transform=self.fig.transFigure,
                                      facecolor=bar, edgecolor="none", zorder=2))
        self.space(0.01)

    def table(self, frame: pd.DataFrame, *, size: float = 8.0, highlight: int | None = None,
              note: str = "") -> None:
        """A table: bold header over a rule, text left-aligned, numbers right-aligned, row ``highlight``
        (position) tinted; column widths follow the widest cell. ``note`` goes under it, small."""
        size *= self.scale
        cells = [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
        headers = [str(c) for c in frame.columns]
        numeric = [frame[c].dtype.kind in "iuf" or all(_NUMBERLIKE.match(v) for v in col)
                   for c, col in zip(frame.columns, zip(*cells, strict=True) if cells else [() for _ in headers],
                                     strict=True)]
        widths = self._column_widths(headers, cells, size)
        room = self.right - self.left
        if sum(widths) > room:  # too wide: a smaller font, down to 6 pt, then the widest text column wraps
            size = max(6.0, size * room / sum(widths))
            widths = self._column_widths(headers, cells, size)
            if sum(widths) > room:
                cells, widths = self._wrap_widest(cells, widths, numeric, size, room)
        row_h = size * 1.75 / 72.0 / float(self.fig.get_figheight())
        xs = [self.left]
        for w in widths[:-1]:
            xs.append(xs[-1] + w)
        self._row(headers, xs, widths, numeric, size, weight="bold")
        self.fig.add_artist(_rule(self.left, self.left + sum(widths), self.y + 0.2 * row_h, width=0.8))
        for i, row in enumerate(cells):
            if i == highlight:
                h = self._row_height(row, size)
                self.fig.add_artist(Rectangle((self.left, self.y - h + row_h * 0.05), sum(widths), h + row_h * 0.1,
                                              transform=self.fig.transFigure, facecolor="#fff3c4", edgecolor="none",
                                              zorder=0))
            self._row(row, xs, widths, numeric, size, weight="bold" if i == highlight else "normal")
        self.fig.add_artist(_rule(self.left, self.left + sum(widths), self.y + 0.2 * row_h, width=0.5))
        if note:
            self.space(0.004)
            self._text(note, size=7.5, color=_MUTED, gap=0.006)
        self.space(0.008)

    def _column_widths(self, headers: list[str], cells: list[list[str]], size: float) -> list[float]:
        widths = []
        for j, head in enumerate(headers):
            texts = [head, *(row[j] for row in cells)]
            longest = max(texts, key=len)
            probe = self.fig.text(0, 0, longest, fontsize=size, weight="bold")
            widths.append(self._width(probe) + 0.012)
            probe.remove()
        return widths

    def _wrap_widest(self, cells: list[list[str]], widths: list[float], numeric: list[bool], size: float,
                     room: float) -> tuple[list[list[str]], list[float]]:
        """Fit a table to ``room`` by wrapping its widest text column into the width the others leave (a
        squeezed column would run its text over its neighbours'); squeezed only if that leaves too little."""
        text = [j for j, is_number in enumerate(numeric) if not is_number]
        if not text:
            return cells, [w * room / sum(widths) for w in widths]
        j = max(text, key=lambda k: widths[k])
        left = room - (sum(widths) - widths[j])
        if left < 0.15 * room:
            return cells, [w * room / sum(widths) for w in widths]
        chars = self._chars(size, left - 0.012, bold=True)
        wrapped = [[textwrap.fill(v, chars) if k == j else v for k, v in enumerate(row)] for row in cells]
        return wrapped, [left if k == j else w for k, w in enumerate(widths)]

    def _row_height(self, values: Sequence[str], size: float) -> float:
        """A row's height: one line's, plus a line (at matplotlib's 1.2 spacing) per wrapped line."""
        lines = max((v.count("\n") + 1 for v in values), default=1)
        return size * (1.75 + 1.2 * (lines - 1)) / 72.0 / float(self.fig.get_figheight())

    def _row(self, values: Sequence[str], xs: list[float], widths: list[float], numeric: list[bool], size: float,
             weight: str) -> None:
        for value, x, w, is_number in zip(values, xs, widths, numeric, strict=True):
            if is_number:
                self.fig.text(x + w - 0.009, self.y, value, fontsize=size, va="top", ha="right", weight=weight,
                              color=_INK)
            else:
                self.fig.text(x + 0.002, self.y, value, fontsize=size, va="top", ha="left", weight=weight, color=_INK)
        self.y -= self._row_height(values, size)

    def axes(self, height: float, *, left_pad: float = 0.06, bottom_pad: float = 0.03) -> Axes:
        """An Axes in the next ``height`` of the page (room left for tick labels)."""
        bottom = self.y - height
        ax = self.fig.add_axes((self.left + left_pad, bottom + bottom_pad, self.right - self.left - left_pad - 0.01,
                                height - bottom_pad - 0.01))
        self.y = bottom - 0.01
        return ax

    def footer(self, text: str) -> None:
        """Small muted text at the bottom of the page, wrapped to the margins."""
        wrapped = textwrap.fill(text, self._chars(7.0, self.right - self.left))
        self.fig.text(self.left, 0.02, wrapped, fontsize=7, color=_MUTED, va="bottom", linespacing=1.3)


def fitted(build: Callable[[float], Page], bottom: float, scales: Sequence[float] = (1.0, 0.94, 0.88, 0.82, 0.76, 0.71)
           ) -> Page:
    """The page ``build(scale)`` makes at the largest of ``scales`` whose content ends above ``bottom``
    (figure fraction; the footer's top), else at the smallest: a long page-one shrinks its type rather
    than run into its footer or off the page."""
    page = build(scales[0])
    for scale in scales[1:]:
        if page.y >= bottom:
            break
        page = build(scale)
    return page


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _rule(x0: float, x1: float, y: float, width: float = 0.6) -> Line2D:
    return Line2D([x0, x1], [y, y], linewidth=width, color="#9aa5b1")


def plot_page(fig: Figure, reading: str, size: tuple[float, float] = A4_LANDSCAPE) -> Figure:
    """A plot as a report page: resized to ``size``, its one-sentence reading wrapped under it."""
    fig.set_size_inches(*size)
    text = "\n".join(textwrap.wrap(f"Reading: {reading}", int(size[0] * 72 * 0.88 / (10.5 * 0.5))))
    lines = text.count("\n") + 1
    bottom = 0.06 + lines * 0.032
    fig.tight_layout(rect=(0.03, bottom, 0.97, 0.97))
    fig.text(0.05, 0.035, text, fontsize=10.5, va="bottom", ha="left", color=_INK, linespacing=1.4)
    return fig
