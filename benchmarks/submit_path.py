"""Submit path figures: worker CPU time per message, and handler import times.

Run: ``.venv/bin/python benchmarks/submit_path.py``

1. CPU time (``time.process_time``) of the submit worker handler per SQS message,
   warm, with every AWS call replaced by an in-memory stand-in (job records,
   Idempotency persistence, Batch) so only quotagov's and Powertools' own work is
   measured. Target: < 2 ms per message.
2. Import cost of every function's handler module (all ``Handler`` entries of
   ``template.yaml``) in a fresh interpreter, next to a bare ``import boto3`` measured
   in the same run: CPU time (``time.process_time``, what a Lambda cold start pays at
   its CPU share) and wall time, medians of ``--runs`` interpreters. Target: CPU time
   <= 1.5x boto3 for every handler (the cold-start budget).

   ``--compare SRC`` measures the handler modules of another checkout too (its ``src``
   directory, e.g. ``git worktree add /tmp/base main`` then ``--compare /tmp/base/src``),
   interleaved with this one's in the same run, so before/after figures share one
   machine state. ``--imports-only`` skips the worker figure.
3. ``--packages BUILD`` (a ``sam build`` output, e.g. ``.aws-sam/build`` after
   ``make lint-template``): each function's built package and each layer, unzipped
   and zipped (deflate, as ``sam deploy`` uploads it) bytes and files, against
   Lambda's limits of 50 MB zipped per upload and 250 MB unzipped with the layers
   (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html);
   ``--compare-packages BUILD`` prints another build's beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from quotagov import wiring
from quotagov.clock import SystemClock
from quotagov.governance.model.job import JobRecord, SubmissionState, client_token_for
from quotagov.governance.ports import (
    JobRecordConflictError,
    JobRecordExistsError,
    JobRecordNotFoundError,
)
from quotagov.policy.loading import FilePolicySource
from quotagov.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = 2000
BATCH = 10


class MemoryJobs:
    """In-memory JobsRepository (conditional writes as in DynamoDB)."""

    def __init__(self) -> None:
        self.items: dict[str, JobRecord] = {}

    def create_if_absent(self, record: JobRecord) -> JobRecord:
        if record.pk in self.items:
            raise JobRecordExistsError(record.pk, "exists")
        stored = record.model_copy(update={"version": 1})
        self.items[record.pk] = stored
        return stored

    def get(self, submission_id: str) -> JobRecord | None:
        return self.items.get(submission_id)

    def get_by_batch_job_id(self, batch_job_id: str) -> JobRecord | None:
        return next((r for r in self.items.values() if r.batchJobId == batch_job_id), None)

    def update_if_expected(
        self,
        submission_id: str,
        changes: Mapping[str, Any],
        *,
        expected_version: int | None = None,
        expected_states: Collection[SubmissionState] | None = None,
    ) -> JobRecord:
        current = self.items.get(submission_id)
        if current is None:
            raise JobRecordNotFoundError(submission_id, "missing")
        if (expected_version is not None and current.version != expected_version) or (
            expected_states and current.state not in expected_states
        ):
            raise JobRecordConflictError(submission_id, "conflict", current)
        data = {**current.to_item(), **changes, "version": current.version + 1}
        stored = JobRecord.model_validate({k: v for k, v in data.items() if v is not None})
        self.items[submission_id] = stored
        return stored


class MemoryPersistence(BasePersistenceLayer):  # type: ignore[misc]
    """In-memory Powertools Idempotency persistence."""

    def __init__(self) -> None:
        super().__init__()
        self.records: dict[str, DataRecord] = {}

    def _get_record(self, idempotency_key: str) -> DataRecord:
        try:
            return self.records[idempotency_key]
        except KeyError:
            raise IdempotencyItemNotFoundError from None

    def _put_record(self, data_record: DataRecord) -> None:
        existing = self.records.get(data_record.idempotency_key)
        if existing is not None and existing.status == "COMPLETED":
            raise IdempotencyItemAlreadyExistsError
        self.records[data_record.idempotency_key] = data_record

    def _update_record(self, data_record: DataRecord) -> None:
        self.records[data_record.idempotency_key] = data_record

    def _delete_record(self, data_record: DataRecord) -> None:
        self.records.pop(data_record.idempotency_key, None)


class InstantBatch:
    """Answers SubmitServiceJob at once, like Batch's response shape."""

    def __init__(self) -> None:
        self.count = 0

    def submit_service_job(self, **request: Any) -> dict[str, Any]:
        self.count += 1
        job_id = f"{self.count:08x}-0000-4000-8000-000000000000"
        return {
            "jobId": job_id,
            "jobName": request["jobName"],
            "jobArn": f"arn:aws:batch:eu-west-1:111122223333:service-job/{job_id}",
        }


class Context:
    function_name = "bench"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-west-1:111122223333:function:bench"
    aws_request_id = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def _payload(name: str) -> str:
    return json.dumps(
        {
            "TrainingJobName": name,
            "RoleArn": "arn:aws:iam::111122223333:role/sm-exec-research",
            "AlgorithmSpecification": {"TrainingInputMode": "File", "TrainingImage": "img"},
            "OutputDataConfig": {"S3OutputPath": "s3://bucket/out/"},
            "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1},
            "CheckpointConfig": {"S3Uri": f"s3://bucket/ckpt/{name}/"},
        }
    )


def worker_cpu_per_message() -> float:
    """Median CPU milliseconds per message over batches of queued-submission messages."""
    from importlib import resources

    from quotagov.handlers import submit_worker

    path = resources.files("quotagov.examples").joinpath("policy.yaml")
    jobs, batch = MemoryJobs(), InstantBatch()
    wiring.override(
        Settings(job_queue="ml-gov-queue"),
        jobs=jobs,
        batch=batch,
        idempotency=MemoryPersistence(),
        policy_source=FilePolicySource(str(path)),
        submit_pacer=lambda: None,
        clock=SystemClock(),
    )
    # FilePolicySource re-reads the file per call; Lambda's SSM source is cached, so
    # give the worker the parsed policy once, like a warm Lambda holds it.
    wiring.services().set("policy", wiring.services().policy_source.current())
    now = int(time.time())
    alice = "arn:aws:sts::111122223333:assumed-role/researcher/alice"
    for i in range(MESSAGES + 100):
        pk = f"sub-{i:06d}"
        jobs.create_if_absent(
            JobRecord(
                pk=pk,
                state=SubmissionState.QUEUED,
                team="research",
                workloadClass="exploratory",
                priorityLevel="standard",
                jobName=f"job-{i}",
                principal=alice,
                checkpointIntervalSeconds=600,
                serviceRequestPayload=_payload(f"job-{i}"),
                instanceType="ml.g5.xlarge",
                instanceCount=1,
                clientToken=client_token_for(pk),
                createdAt=now,
                updatedAt=now,
            )
        )

    def event(start: int) -> dict[str, Any]:
        return {
            "Records": [
                {
                    "messageId": f"m-{i}",
                    "receiptHandle": "r",
                    "body": json.dumps({"submissionId": f"sub-{i:06d}"}),
                    "attributes": {"ApproximateReceiveCount": "1"},
                    "messageAttributes": {},
                    "md5OfBody": "0",
                    "eventSource": "aws:sqs",
                    "eventSourceARN": "arn:aws:sqs:eu-west-1:111122223333:q",
                    "awsRegion": "eu-west-1",
                }
                for i in range(start, start + BATCH)
            ]
        }

    context = Context()
    samples = []
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        for start in range(0, 100, BATCH):  # warm-up
            submit_worker.handler(event(start), context)
        for start in range(100, 100 + MESSAGES, BATCH):
            ev = event(start)
            t0 = time.process_time()
            reply = submit_worker.handler(ev, context)
            samples.append((time.process_time() - t0) * 1000 / BATCH)
            assert reply == {"batchItemFailures": []}, reply
    assert batch.count == MESSAGES + 100
    return statistics.median(samples)


def handler_modules(template: Path = ROOT / "template.yaml") -> list[str]:
    """The module of every function's ``Handler`` in the template (sorted, unique)."""
    from quotagov_tools.deploy.template import (
        FUNCTION_TYPE,
        function_property,
        load_template,
        resources_of_type,
    )

    loaded = load_template(template)
    handlers = {
        str(function_property(loaded, name, "Handler")).rpartition(".")[0]
        for name in resources_of_type(loaded, FUNCTION_TYPE)
    }
    return sorted(handlers)


_PROBE = (
    "import time; c = time.process_time(); w = time.perf_counter(); import {module}; "
    "print(time.process_time() - c, time.perf_counter() - w)"
)


def import_cost(module: str, src: str | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``import module`` in a fresh interpreter.

    ``src``: put this directory first on ``sys.path`` (another checkout's ``src``).
    """
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.split()
    return float(out[0]), float(out[1])


def _in_checkout(src: str, module: str) -> bool:
    return (Path(src) / (module.replace(".", "/") + ".py")).is_file()


def import_medians(
    modules: list[str], runs: int, sources: list[str | None]
) -> dict[tuple[str | None, str], tuple[float, float]]:
    """Median (CPU, wall) per (source, module); runs interleaved across all of them."""
    samples: dict[tuple[str | None, str], list[tuple[float, float]]] = {}
    for _ in range(runs):
        for module in modules:
            for src in sources:
                if src is not None and not _in_checkout(src, module):
                    continue  # boto3, or a handler that checkout does not have
                samples.setdefault((src, module), []).append(import_cost(module, src))
    return {
        key: (statistics.median(c for c, _ in vals), statistics.median(w for _, w in vals))
        for key, vals in samples.items()
    }


#: Lambda's deployment package limits, bytes (the page cited in the module doc).
ZIPPED_LIMIT = 50 * 1024 * 1024
UNZIPPED_LIMIT = 250 * 1024 * 1024


def package_size(directory: Path) -> tuple[int, int, int]:
    """(unzipped bytes, zipped bytes, files) of one built package directory; the zip
    is written to memory with deflate, like the upload ``sam deploy`` makes."""
    files = sorted(path for path in directory.rglob("*") if path.is_file())
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, path.relative_to(directory))
    return sum(path.stat().st_size for path in files), sink.tell(), len(files)


def package_sizes(build: Path) -> dict[str, tuple[int, int, int]]:
    """:func:`package_size` of every package directory of a ``sam build`` output
    (functions and layers: each directory beside its ``template.yaml``)."""
    return {path.name: package_size(path) for path in sorted(build.iterdir()) if path.is_dir()}


def print_packages(build: Path, compare: Path | None) -> None:
    """Print :func:`package_sizes` of ``build`` (and of ``compare`` beside them)."""
    sizes = package_sizes(build)
    before = package_sizes(compare) if compare is not None else {}
    mb = 1024 * 1024
    print(f"built packages in {build} (MB unzipped / zipped, files):")
    layers = sum(unzipped for name, (unzipped, _, _) in sizes.items() if name.endswith("Layer"))
    for name, (unzipped, zipped, files) in sizes.items():
        line = f"  {name:<28} {unzipped / mb:7.2f} / {zipped / mb:6.2f} MB, {files:5d} files"
        if name in before:
            old_unzipped, old_zipped, old_files = before[name]
            line += (
                f"  (before: {old_unzipped / mb:.2f} / {old_zipped / mb:.2f} MB, {old_files} files)"
            )
        if zipped > ZIPPED_LIMIT or (
            not name.endswith("Layer") and unzipped + layers > UNZIPPED_LIMIT
        ):
            line += "  OVER a Lambda package limit"
        print(line)
    print(
        f"  limits: {ZIPPED_LIMIT // mb} MB zipped per upload, {UNZIPPED_LIMIT // mb} MB "
        f"unzipped with the layers ({layers / mb:.2f} MB of layers here)"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="interpreters per module")
    parser.add_argument("--compare", help="another checkout's src directory (before)")
    parser.add_argument("--imports-only", action="store_true")
    parser.add_argument("--packages", type=Path, help="a sam build output: package sizes")
    parser.add_argument("--compare-packages", type=Path, help="another sam build output")
    args = parser.parse_args(argv)
    if args.packages is not None:
        print_packages(args.packages, args.compare_packages)
        if args.imports_only:
            return
    if not args.imports_only:
        cpu = worker_cpu_per_message()
        print(
            f"submit worker CPU per message (warm, AWS stubbed, batches of {BATCH}): "
            f"{cpu:.3f} ms (target < 2 ms)"
        )
    modules = handler_modules()
    sources: list[str | None] = [None] + ([args.compare] if args.compare else [])
    figures = import_medians(["boto3", *modules], args.runs, sources)
    base_cpu, base_wall = figures[(None, "boto3")]
    print(
        f"import boto3: {base_cpu * 1000:.0f} ms CPU, {base_wall * 1000:.0f} ms wall "
        f"(median of {args.runs})"
    )
    worst = 0.0
    for module in modules:
        cpu_s, wall_s = figures[(None, module)]
        worst = max(worst, cpu_s / base_cpu)
        line = (
            f"import {module}: {cpu_s * 1000:.0f} ms CPU = {cpu_s / base_cpu:.2f}x boto3, "
            f"{wall_s * 1000:.0f} ms wall = {wall_s / base_wall:.2f}x"
        )
        if args.compare and (args.compare, module) in figures:
            old_cpu, _ = figures[(args.compare, module)]
            line += f"  (before: {old_cpu * 1000:.0f} ms CPU = {old_cpu / base_cpu:.2f}x)"
        print(line)
    verdict = "met" if worst <= 1.5 else "NOT met"
    print(f"{len(modules)} handler modules, worst {worst:.2f}x boto3 CPU: target <= 1.5x {verdict}")


if __name__ == "__main__":
    main()
