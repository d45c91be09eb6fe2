"""Job history of a live queue, for the what-if tool: :func:`export_history`."""

from quotagov.governance.history.export import (
    ExportSummary,
    api_call_line,
    export_history,
    history_line,
)

__all__ = ["ExportSummary", "api_call_line", "export_history", "history_line"]
