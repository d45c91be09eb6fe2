"""One time format for everything the REST API answers.

- An **instant** is ISO 8601 in UTC with a ``Z``: ``2026-12-03T15:20:52Z``, with
  milliseconds (``2026-12-03T15:20:52.250Z``) when it is not a whole second (RFC 3339,
  the ``date-time`` format of JSON Schema and OpenAPI:
  https://json-schema.org/understanding-json-schema/reference/string#dates-and-times).
- A **duration** is a number of seconds, in a member whose name ends in ``Seconds``
  (``runSeconds``, ``computeSeconds``, ``attemptDurationSeconds``).

quotagov stores instants as epoch seconds (its records) and Batch gives them as epoch
milliseconds (``GetJobQueueSnapshot``'s ``earliestTimeAtPosition``, the attempts'
``startedAt``/``stoppedAt``:
https://docs.aws.amazon.com/batch/latest/APIReference/API_GetJobQueueSnapshot.html);
the views the API answers convert both here, once, with :func:`from_seconds`,
:func:`from_millis` and :func:`convert`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any


def iso_utc(epoch_seconds: float) -> str:
    """Epoch seconds (float) as ISO 8601 UTC with a ``Z`` (milliseconds when not whole).

    Raises:
        OverflowError, ValueError, OSError: ``epoch_seconds`` is outside the years 1-9999.
    """
    moment = datetime.fromtimestamp(float(epoch_seconds), tz=UTC)
    text = moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def from_seconds(value: Any) -> Any:
    """``value`` in epoch seconds as an instant; None stays None, and a value that is
    already text (an instant converted before) is returned unchanged."""
    if value is None or isinstance(value, str):
        return value
    return iso_utc(float(value))


def from_millis(value: Any) -> Any:
    """``value`` in epoch milliseconds (Batch's unit) as an instant; None stays None,
    and text is returned unchanged."""
    if value is None or isinstance(value, str):
        return value
    return iso_utc(float(value) / 1000.0)


def convert(
    mapping: Mapping[str, Any],
    *,
    seconds: Iterable[str] = (),
    millis: Iterable[str] = (),
) -> dict[str, Any]:
    """A copy of ``mapping`` whose members named in ``seconds`` (epoch seconds) and
    ``millis`` (epoch milliseconds) are instants; members it lacks stay absent."""
    out = dict(mapping)
    for name in seconds:
        if name in out:
            out[name] = from_seconds(out[name])
    for name in millis:
        if name in out:
            out[name] = from_millis(out[name])
    return out


def epoch_seconds(instant: str) -> float:
    """An instant of the API (``2026-12-03T15:20:52Z``) back as epoch seconds.

    Raises:
        ValueError: ``instant`` is not ISO 8601 with a UTC offset (``Z`` or ``+00:00``).
    """
    moment = datetime.fromisoformat(instant)
    if moment.tzinfo is None:
        raise ValueError(f"{instant!r} has no UTC offset")
    return moment.timestamp()
