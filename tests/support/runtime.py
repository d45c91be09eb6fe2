"""A local runtime for a test that drives it by hand, started and stopped quietly."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator

from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions


@contextlib.contextmanager
def quiet_runtime() -> Iterator[LocalRuntime]:
    """A started :class:`LocalRuntime` (the template's stack on moto, the walkthrough's
    simulated Batch, a fake Slack on loopback) whose start-up banner is swallowed and
    whose handlers log errors only; stopped when the block ends, also on a failure."""
    with contextlib.redirect_stdout(io.StringIO()):
        runtime = LocalRuntime(RuntimeOptions(extra_env={"POWERTOOLS_LOG_LEVEL": "ERROR"}))
        runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()
