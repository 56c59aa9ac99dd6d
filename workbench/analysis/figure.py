"""A matplotlib figure that shows itself in Jupyter, without pyplot.

The plot functions build figures with the object-oriented API on a fresh ``Figure`` so they never
touch pyplot's global state (no hidden current figure, nothing shown twice). The price is that
Jupyter has no display hook for a bare ``Figure``: IPython registers one only when pyplot's inline
backend is loaded, so a cell ending in a plot printed ``<Figure size 900x500 with 1 Axes>``.
:class:`InlineFigure` is a ``Figure`` with IPython's rich-display method: a cell that returns one
shows the PNG, in Jupyter and in papermill's executed notebooks alike, and the PDF report saves it
as it saves any figure.

>>> fig = InlineFigure(figsize=(2, 1))
>>> fig._repr_png_()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

__all__ = ["DISPLAY_DPI", "InlineFigure", "png_bytes"]

#: Resolution of figures shown in notebooks, dots per inch (sharp on a laptop screen, small files).
DISPLAY_DPI = 100


def png_bytes(fig: Figure, dpi: float = DISPLAY_DPI) -> bytes:
    """The figure rendered as PNG bytes (Agg), at ``dpi`` dots per inch."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


class InlineFigure(Figure):
    """A ``Figure`` that Jupyter displays inline (``_repr_png_``); otherwise an ordinary figure."""

    def _repr_png_(self) -> bytes:
        """PNG for IPython's display machinery (called by Jupyter, never by the library)."""
        return png_bytes(self)
