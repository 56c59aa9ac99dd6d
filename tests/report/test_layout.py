"""Typeset pages: blocks stack without overlapping, tables stay inside the margins."""

from __future__ import annotations

import itertools

import pandas as pd

from workbench.report.layout import A4_LANDSCAPE, Page, fitted


def _text_boxes(page: Page) -> list[tuple[float, float, float, float]]:
    renderer = page.fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = []
    for t in page.fig.texts:
        if t.get_text().strip():
            b = t.get_window_extent(renderer).transformed(page.fig.transFigure.inverted())
            boxes.append((b.x0, b.y0, b.x1, b.y1))
    return boxes


def test_blocks_stack_down_the_page_without_overlapping() -> None:
    page = Page("A title", "a subtitle")
    page.heading("Heading")
    page.paragraph("A long paragraph that must wrap. " * 20)
    page.facts([("Label", "A value that is long enough to wrap onto a second line. " * 3), ("Other", "short")])
    page.callout("Boxed text. " * 15, "good")
    page.bullets(["first item " * 10, "second item"])
    boxes = sorted(_text_boxes(page), key=lambda b: -b[3])
    for upper, lower in itertools.pairwise(boxes):
        side_by_side = lower[0] >= upper[2] - 1e-6 or upper[0] >= lower[2] - 1e-6  # facts: label beside value
        assert side_by_side or lower[3] <= upper[1] + 1e-3, (upper, lower)
    assert all(b[0] >= 0.0 and b[2] <= 1.0 for b in boxes)  # nothing runs off the page


def test_a_wide_table_shrinks_to_the_margins() -> None:
    page = Page("Wide", size=A4_LANDSCAPE)
    frame = pd.DataFrame({f"column number {i}": ["a fairly long cell value"] * 3 for i in range(12)})
    page.table(frame, size=9)
    boxes = _text_boxes(page)
    assert max(b[2] for b in boxes) <= page.right + 0.01


def test_a_long_page_shrinks_its_type_to_end_above_the_footer() -> None:
    def build(scale: float) -> Page:
        page = Page("Long", scale=scale)
        for _ in range(9):
            page.heading("Section")
            page.paragraph("Words that fill the page until it would run into the footer. " * 6)
        return page

    assert build(1.0).y < 0.06  # at full size it runs past the footer's top
    page = fitted(build, 0.06)
    assert page.y >= 0.06 and page.scale < 1.0
    short = fitted(lambda scale: Page("Short", scale=scale), 0.06)
    assert short.scale == 1.0  # nothing to shrink


def test_a_table_with_one_long_text_column_wraps_it_instead_of_running_over_its_neighbours() -> None:
    """The what-if table's 'how it is modelled' ran over the queries/s and p99 columns when squeezed."""
    page = Page("What if", size=(8.27, 11.69))
    frame = pd.DataFrame({"case": ["one server wedged", "today"],
                          "how it is modelled": ["Server_1 accepts requests and answers none all run: what reaches "
                                                 "it waits the query's timeout (427, partial); brokers keep routing "
                                                 "to it, as Pinot's do", "as simulated"],
                          "queries/s": [40.7, 42.4], "p99 [95% interval]": ["10008 ms [10008, 10008]", "122 ms"],
                          "SLO": ["BREAKS", "meets"]})
    page.table(frame, size=8.0)
    renderer = page.fig.canvas.get_renderer()  # type: ignore[attr-defined]
    inverse = page.fig.transFigure.inverted()
    cells = {t.get_text(): t.get_window_extent(renderer).transformed(inverse) for t in page.fig.texts}
    long_text = next(b for text, b in cells.items() if text.startswith("Server_1"))
    numbers = cells["40.7"]
    assert long_text.x1 <= numbers.x0  # the wrapped text ends before the next column's numbers start
    assert long_text.height > 1.5 * cells["today"].height  # on several lines
    assert max(b.x1 for b in cells.values()) <= page.right + 0.01
    below = cells["today"]
    assert below.y1 <= long_text.y0 + 1e-3  # the next row starts under the wrapped one
