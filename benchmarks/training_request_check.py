"""The cost of checking a ``CreateTrainingJob`` request against botocore's model.

Run: ``.venv/bin/python benchmarks/training_request_check.py``

Each figure is CPU time (``time.process_time``) in a fresh interpreter, measured in
the same run, so machine load moves them together:

1. ``import boto3`` (the reference of the cold-start target);
2. loading botocore's whole ``sagemaker`` service model and taking the
   ``CreateTrainingJob`` input shape (what a check at run time would need);
3. loading the extract quotagov ships (``adapters/sagemaker_create_training_job.json``)
   and checking the example request once (the first check of a cold Lambda);
4. a warm check of the example request (median of 2000).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVENT = str(ROOT / "events/jobs_api-submit.json")

SNIPPETS = {
    "import boto3": "import boto3",
    "botocore sagemaker model -> CreateTrainingJob input": (
        "import botocore.session\n"
        "s = botocore.session.get_session()\n"
        "s.get_service_model('sagemaker').operation_model('CreateTrainingJob').input_shape"
    ),
    "quotagov extract + first check": (
        "import json\n"
        "from quotagov.adapters.sagemaker_model import training_request_faults\n"
        f"body = json.loads(json.load(open({EVENT!r}))['body'])\n"
        "assert training_request_faults(body['serviceRequestPayload']) == []"
    ),
}


def _cpu(snippet: str) -> float:
    code = f"import time\nt = time.process_time()\n{snippet}\nprint(time.process_time() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    """Print each figure (median of 5 fresh interpreters) in milliseconds."""
    for name, snippet in SNIPPETS.items():
        runs = [_cpu(snippet) for _ in range(5)]
        print(f"{name:52} {statistics.median(runs) * 1000:8.1f} ms CPU (median of 5)")
    from quotagov.adapters.sagemaker_model import training_request_faults

    body = json.loads(json.loads((ROOT / "events/jobs_api-submit.json").read_text())["body"])
    payload = body["serviceRequestPayload"]
    training_request_faults(payload)
    times = []
    for _ in range(2000):
        start = time.perf_counter()
        training_request_faults(payload)
        times.append(time.perf_counter() - start)
    print(f"{'warm check of the example request':52} {statistics.median(times) * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
