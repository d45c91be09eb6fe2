"""Settings come from the environment and name the missing variable."""

import pytest

from quotagov.settings import Settings


def test_from_env_reads_upper_snake_case_names() -> None:
    settings = Settings.from_env({"JOBS_TABLE": "jobs", "JOB_QUEUE": "arn:q"})
    assert settings.jobs_table == "jobs"
    assert settings.require("job_queue") == "arn:q"


def test_require_names_the_missing_variable() -> None:
    with pytest.raises(RuntimeError, match="AUDIT_TABLE is not set"):
        Settings.from_env({}).require("audit_table")
