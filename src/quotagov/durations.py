"""Human-readable durations: ``6978803`` seconds print as ``80 d 18 h``, ``95`` as ``1 m 35 s``.

Used by every report a person reads (``quotagov simulate``'s table, ``quotagov
whatif``'s terminal table and HTML page); JSON output keeps plain seconds.
"""

from __future__ import annotations

_UNITS: tuple[tuple[str, int], ...] = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def human_duration(seconds: float | None, *, parts: int = 2) -> str:
    """``seconds`` as at most ``parts`` units of d/h/m/s, largest first (``-`` for None).

    Below one minute a fraction is kept to one decimal (``0.5 s``); larger values are
    rounded to the smallest unit shown (``3 h 2 m``). Negative values keep their sign.

    Examples: ``0`` -> ``0 s``; ``95`` -> ``1 m 35 s``; ``7260`` -> ``2 h 1 m``;
    ``6978803`` -> ``80 d 18 h``.
    """
    if seconds is None:
        return "-"
    sign = "-" if seconds < 0 else ""
    value = abs(float(seconds))
    if value < 60:
        text = f"{value:.1f}".rstrip("0").rstrip(".")
        return f"{sign}{text} s"
    first = next(i for i, (_, size) in enumerate(_UNITS) if value >= size)
    smallest = _UNITS[first : first + parts][-1][1]
    remaining = round(value / smallest) * smallest
    # rounding may carry into a larger unit (3599.6 s is 1 h, not 60 m)
    first = next(i for i, (_, size) in enumerate(_UNITS) if remaining >= size)
    shown = _UNITS[first : first + parts]
    smallest = shown[-1][1]
    remaining = round(remaining / smallest) * smallest
    out: list[str] = []
    for unit, size in shown:
        count, remaining = divmod(remaining, size)
        if count or not out:
            out.append(f"{int(count)} {unit}")
    return sign + " ".join(out)
