"""A score's colour, the same on dashboard pages, in notebooks and in the PDF, and the text colour
legible on it (WCAG relative luminance). The bottom of the plotting package: heat.py (matplotlib's
colour map and cell numbers) and heatmap.py (the questions x scores heatmap) both read it.
"""
from __future__ import annotations

UNDEFINED_RGB = (221, 221, 221)  # grey: a score that is undefined for the question, not 0
KEY_STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)  # the values a colour key shows


def heat_rgb(value: float) -> tuple[int, int, int]:
    """A score's cell colour, the same on pages and in the PDF: red at 0, pale yellow at 0.5,
    green at 1."""
    v = min(max(float(value), 0.0), 1.0)
    red, green = (255, int(150 + 105 * v / 0.5)) if v < 0.5 else (int(255 - 95 * (v - 0.5) / 0.5), 240)
    return red, green, 170


def luminance(rgb, scale: float = 255) -> float:
    """WCAG 2 relative luminance of an sRGB colour; channels out of `scale` (255, or 1 for matplotlib)."""
    values = [float(c) / scale for c in rgb[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in values]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def text_on(rgb, scale: float = 255) -> str:
    """The text colour legible on a background: black where black's contrast ratio is the larger,
    else white. (L + 0.05) / 0.05 = 1.05 / (L + 0.05) at L = 0.179, so black above that."""
    return "#000000" if luminance(rgb, scale) > 0.179 else "#ffffff"


def heat_css(value) -> str:
    """A score cell's inline style: its heat colour and the text colour legible on it."""
    if value is None:
        return ""
    rgb = heat_rgb(value)
    return "background-color: rgb({},{},{}); color: {}".format(*rgb, text_on(rgb))
