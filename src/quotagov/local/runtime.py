"""The embedded local runtime: the whole stack of ``template.yaml`` in one process.

:class:`LocalRuntime` starts moto **in-process** (``moto.mock_aws``) for every local
command (``demo``, ``serve``, ``invoke``, the tests), creates the template's
DynamoDB tables, SQS queues (with their DLQ redrive), SSM policy parameter, Slack
secret and EventBridge rules from the template's own definitions, sets each
function's environment from the template, and wires the use cases to a simulated
AWS Batch on a virtual :class:`~quotagov.clock.ManualClock` and to a loopback fake
Slack. It then plays the part of Lambda and its triggers:

- API Gateway: :meth:`LocalRuntime.api` builds the REST proxy event exactly as API
  Gateway would (route table from the template's ``Api`` events, IAM caller in
  ``requestContext.identity.userArn``, base64 bodies per ``BinaryMediaTypes``).
- SQS event source mappings: messages are given to the worker in batches of the
  template's ``BatchSize``; messages reported in ``batchItemFailures`` (or the whole
  batch when the handler raises) stay invisible for the queue's ``VisibilityTimeout``
  of *virtual* time, then come back; after ``maxReceiveCount`` receives SQS moves
  them to the DLQ.
- EventBridge: simulated Batch ``Batch Service Job State Change`` events and
  synthesized ``AWS API Call via CloudTrail`` events (for mutating Batch calls made by
  the functions or by an administrator through :meth:`LocalRuntime.admin_batch`) are
  put on moto's default bus, matched by the template's rule patterns, and delivered
  to the target function (asynchronous invocation: the template's
  ``EventInvokeConfig`` retries, then its ``OnFailure`` SQS destination).
- Schedules: ``rate(...)`` rules fire on virtual clock ticks during :meth:`advance_to`.

One invocation runs at a time (the runtime holds a lock, like a function with a
reserved concurrency of one), which keeps moto's in-memory backends consistent when
``quotagov serve`` answers HTTP requests on several threads.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import os
import secrets
import threading
import traceback
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quotagov import wiring
from quotagov.clock import ManualClock
from quotagov.deploy.template import load_template
from quotagov.local.cloudtrail import CloudTrailRecordingBatch
from quotagov.local.eventbus import LocalEventBus
from quotagov.local.lambda_events import (
    LambdaContext,
    iso_time,
    rest_api_event,
    scheduled_event,
    sqs_record,
)
from quotagov.local.stack import (
    ACCOUNT_ID,
    REGION,
    STACK_NAME,
    ApiRoute,
    FunctionSpec,
    Stack,
    default_template_path,
)
from quotagov.settings import Settings

logger = logging.getLogger(__name__)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: The example policy the runtime loads into the SSM policy parameter.
DEFAULT_POLICY = EXAMPLES / "policy.yaml"
#: The walkthrough whose capacity and quota shares the simulated Batch starts with.
DEFAULT_WALKTHROUGH = EXAMPLES / "aws-walkthrough.json"
#: Virtual time 0 of the walkthrough: 2026-05-04T09:00:00Z (epoch seconds).
DEFAULT_EPOCH = 1777885200.0
#: How long SQS keeps a received message invisible in real time; virtual time decides.
_REAL_VISIBILITY_SECONDS = 43200


@dataclass
class Invocation:
    """One handler invocation: what ran, on which trigger, at which virtual time, and how.

    ``result`` is the handler's return value; ``error`` the exception text when it raised.
    """

    function: str
    trigger: str
    at: float
    event: dict[str, Any]
    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the handler returned (did not raise)."""
        return self.error is None


@dataclass
class ApiResponse:
    """What the API Gateway proxy returns to the HTTP client."""

    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        """The body parsed as JSON (``None`` when empty)."""
        return json.loads(self.body) if self.body else None


@dataclass
class _Parked:
    """A received SQS message that failed and reappears at virtual time ``due``."""

    queue_url: str
    receipt_handle: str
    due: float


@dataclass
class RuntimeOptions:
    """How to build a :class:`LocalRuntime`.

    Attributes:
        template: the SAM template (default: ``template.yaml`` of the checkout).
        policy: the governance policy YAML put into the SSM policy parameter.
        walkthrough: the scenario whose capacity and quota shares the simulated Batch uses.
        start: virtual epoch seconds at which the clock starts.
        slack_signing_secret: stored in the Slack secret (random when ``None``).
        slack_bot_token: the bot token stored in the secret and expected by the fake Slack.
        extra_env: more environment variables for every function.
        simulated_batch: build the simulated Batch (off only for runtime tests of a
            template without Batch).
    """

    template: Path | None = None
    policy: Path = DEFAULT_POLICY
    walkthrough: Path = DEFAULT_WALKTHROUGH
    start: float = DEFAULT_EPOCH
    slack_signing_secret: str | None = None
    slack_bot_token: str = "xoxb-quotagov-local"
    extra_env: dict[str, str] = field(default_factory=dict)
    simulated_batch: bool = True


def function_principal(logical_id: str) -> str:
    """The assumed-role session ARN a function's calls carry (its execution role)."""
    return f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/{STACK_NAME}-{logical_id}Role/{logical_id}"


class LocalRuntime:
    """The embedded runtime; use as a context manager or call :meth:`start`/:meth:`stop`.

    Raises:
        quotagov.deploy.template.TemplateError: from :meth:`start` when the template cannot
            be provisioned.
    """

    def __init__(self, options: RuntimeOptions | None = None) -> None:
        self.options = options or RuntimeOptions()
        self.clock = ManualClock(self.options.start)
        self.signing_secret = self.options.slack_signing_secret or secrets.token_hex(16)
        self.invocations: list[Invocation] = []
        #: Every event put on the bus (Batch state changes, CloudTrail calls), in order.
        self.published: list[dict[str, Any]] = []
        self._lock = threading.RLock()
        self._caller: list[str] = []
        self._parked: list[_Parked] = []
        self._pending_events: list[dict[str, Any]] = []
        self._next_tick: dict[str, float] = {}
        self._mock: Any = None
        self._saved_env: dict[str, str | None] = {}
        self.stack: Stack
        self.functions: dict[str, FunctionSpec] = {}
        self.environments: dict[str, dict[str, str]] = {}
        self.routes: list[ApiRoute] = []
        self.slack: Any = None
        self.batch: Any = None
        self.bus: LocalEventBus
        self.policy_text = self.options.policy.read_text(encoding="utf-8")
        self.walkthrough: dict[str, Any] = json.loads(
            self.options.walkthrough.read_text(encoding="utf-8")
        )

    # -- lifecycle ------------------------------------------------------------------

    def __enter__(self) -> LocalRuntime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _set_env(self, values: Mapping[str, str]) -> None:
        for key, value in values.items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def start(self) -> LocalRuntime:
        """Start moto, the fake Slack and the simulated Batch; provision the template."""
        self._set_env(
            {
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_SESSION_TOKEN": "testing",
                "AWS_DEFAULT_REGION": REGION,
                "AWS_REGION": REGION,
                "MOTO_ACCOUNT_ID": ACCOUNT_ID,
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_METRICS_NAMESPACE": "quotagov-local",
                "POWERTOOLS_SERVICE_NAME": "quotagov",
            }
        )
        os.environ.pop("AWS_ENDPOINT_URL", None)
        from moto import mock_aws

        self._mock = mock_aws()
        self._mock.start()
        from quotagov.local.fake_slack import FakeSlack

        self.slack = FakeSlack(token=self.options.slack_bot_token).start()
        try:
            self._provision()
            if self.options.simulated_batch:
                self._build_batch()
            else:
                wiring.override(Settings.from_env(), clock=self.clock)
        except BaseException:
            self.stop()  # leave no moto patch, thread or environment change behind
            raise
        return self

    def stop(self) -> None:
        """Stop the fake Slack and moto and restore the environment (idempotent)."""
        if self.slack is not None:
            self.slack.stop()
            self.slack = None
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
        wiring.reset()

    # -- provisioning -----------------------------------------------------------------

    @functools.cached_property
    def job_queue(self) -> str:
        """The governed job queue ARN (the policy's ``jobQueue``)."""
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        document = yaml.load(self.policy_text, Loader=loader)
        return str(document["jobQueue"])

    @functools.cached_property
    def sqs(self) -> Any:
        """The runtime's own SQS client (moto)."""
        import boto3

        return boto3.client("sqs", region_name=REGION)

    def _parameter_values(self, template: Mapping[str, Any]) -> dict[str, str]:
        """Values for template parameters without defaults that the runtime can supply."""
        import boto3

        values: dict[str, str] = {}
        parameters = template.get("Parameters") or {}
        secret_json = json.dumps(
            {"botToken": self.options.slack_bot_token, "signingSecret": self.signing_secret}
        )
        for name, spec in parameters.items():
            lowered = name.lower()
            if "jobqueue" in lowered:
                values[name] = self.job_queue
            elif "slack" in lowered and ("secret" in lowered) and "Default" not in spec:
                client = boto3.client("secretsmanager", region_name=REGION)
                values[name] = client.create_secret(
                    Name="quotagov/slack", SecretString=secret_json
                )["ARN"]
            elif "policy" in lowered and "Default" not in spec:
                client_ssm = boto3.client("ssm", region_name=REGION)
                client_ssm.put_parameter(
                    Name="/quotagov/policy", Value=self.policy_text, Type="String", Overwrite=True
                )
                values[name] = "/quotagov/policy"
            elif "Default" not in spec:
                values[name] = f"local-{name}"
        return values

    def _provision(self) -> None:
        from quotagov.local.provision import Provisioner

        template = load_template(self.options.template or default_template_path())
        self.stack = Stack(template, self._parameter_values(template))
        self.functions = self.stack.functions()
        overrides: dict[str, str] = {}
        secret_json = json.dumps(
            {"botToken": self.options.slack_bot_token, "signingSecret": self.signing_secret}
        )
        for spec in self.functions.values():
            for variable, raw in spec.environment.items():
                target = raw.get("Ref") if isinstance(raw, dict) else None
                if variable == "POLICY_PARAMETER" and target in self.stack.resources:
                    overrides[str(target)] = self.policy_text
                if variable == "SLACK_SECRET_ARN" and target in self.stack.resources:
                    overrides[str(target)] = secret_json
        Provisioner(self.stack, overrides).provision()
        local_env = {
            "SLACK_API_URL": self.slack.base_url,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
            **self.options.extra_env,
        }
        for logical_id, spec in self.functions.items():
            resolved = self.stack.resolve(spec.environment)
            env = {key: _env_text(value) for key, value in resolved.items()}
            env.update(local_env)
            env.setdefault("JOB_QUEUE", self.job_queue)
            self.environments[logical_id] = env
        union: dict[str, str] = {}
        for env in self.environments.values():
            union.update(env)
        self._set_env(union)
        self.routes = self.stack.api_routes()
        self.bus = LocalEventBus(self.stack.rule_triggers())
        for trigger in self.stack.schedule_triggers():
            self._next_tick[trigger.name] = self.clock.now() + trigger.every_seconds

    def _build_batch(self) -> None:
        from quotagov.local.batch_setup import build_simulated_batch

        self.batch = build_simulated_batch(
            clock=self.clock,
            job_queue=self.job_queue,
            walkthrough=self.walkthrough,
            emit=self._pending_events.append,
        )
        recording = CloudTrailRecordingBatch(
            self.batch,
            principal=self._current_caller,
            clock=self.clock,
            emit=self._pending_events.append,
        )
        self.recording_batch = recording
        settings = Settings.from_env()
        wiring.override(settings, clock=self.clock, batch=recording)

    def _current_caller(self) -> str:
        return self._caller[-1] if self._caller else f"arn:aws:iam::{ACCOUNT_ID}:root"

    # -- invoking handlers -------------------------------------------------------------

    def handler_for(self, function: str) -> Callable[[dict[str, Any], Any], Any]:
        """Import and return the handler callable of ``function`` (a template logical id).

        Raises:
            KeyError: when the template has no such function.
        """
        try:
            spec = self.functions[function]
        except KeyError:
            known = ", ".join(sorted(self.functions))
            raise KeyError(
                f"function {function!r} is not in the template (known: {known})"
            ) from None
        module_name, _, attribute = spec.handler.rpartition(".")
        module = importlib.import_module(module_name)
        handler: Callable[[dict[str, Any], Any], Any] = getattr(module, attribute)
        return handler

    def invoke(self, function: str, event: dict[str, Any], trigger: str = "invoke") -> Invocation:
        """Run ``function``'s handler on ``event`` with a fake Lambda context; never raises.

        The function's template environment is in ``os.environ`` during the call and
        its Batch calls are recorded with the function's role as the caller.
        """
        with self._lock:
            spec = self.functions.get(function)
            record = Invocation(
                function=function, trigger=trigger, at=self.clock.now(), event=event
            )
            try:
                handler = self.handler_for(function)
                assert spec is not None
                self._set_env(self.environments[function])
                os.environ["AWS_LAMBDA_FUNCTION_NAME"] = function
                self._caller.append(function_principal(function))
                try:
                    record.result = handler(
                        event, LambdaContext(function, spec.timeout_seconds, spec.memory_mb)
                    )
                finally:
                    self._caller.pop()
            except Exception as exc:
                record.error = f"{type(exc).__name__}: {exc}"
                logger.debug("invocation of %s failed:\n%s", function, traceback.format_exc())
            self.invocations.append(record)
            return record

    # -- API Gateway ---------------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[ApiRoute, dict[str, str]] | None:
        """Find the template route for ``method path`` and its path parameters."""
        for route in self.routes:
            found = route.match(method, path)
            if found is not None:
                return route, found
        return None

    def api(
        self,
        method: str,
        path: str,
        *,
        principal: str | None = None,
        body: bytes | str | dict[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, list[str]] | None = None,
        pump: bool = True,
    ) -> ApiResponse:
        """Send one HTTP request through the local API Gateway; then deliver what followed.

        ``principal`` is the SigV4 caller for IAM-authorised routes; a request without
        one to such a route gets 403 ``Missing Authentication Token``-style, as API Gateway
        answers. A dict ``body`` is sent as JSON.
        """
        headers = dict(headers or {})
        if isinstance(body, dict):
            body = json.dumps(body)
            headers.setdefault("Content-Type", "application/json")
        raw = body.encode("utf-8") if isinstance(body, str) else body
        found = self.route(method, path)
        if found is None:
            return ApiResponse(404, {"Content-Type": "application/json"}, '{"message":"Not Found"}')
        route, params = found
        if route.iam_auth and not principal:
            return ApiResponse(
                403,
                {"Content-Type": "application/json"},
                '{"message":"Missing Authentication Token"}',
            )
        event = rest_api_event(
            method=method,
            resource=route.path,
            path=path,
            path_parameters=params,
            headers=headers,
            query=query,
            body=raw,
            principal_arn=principal if route.iam_auth else None,
            binary_media_types=self.stack.binary_media_types(route.rest_api),
            stage=self.stack.stage_name(route.rest_api),
            api_id=str(self.stack.ref(route.rest_api)),
            now=self.clock.now,
        )
        with self._lock:
            record = self.invoke(route.function, event, trigger=f"api {method} {route.path}")
            if pump:
                self.pump()
        if not record.ok or not isinstance(record.result, dict):
            return ApiResponse(
                502, {"Content-Type": "application/json"}, '{"message": "Internal server error"}'
            )
        result = record.result
        response_headers = {str(k): str(v) for k, v in (result.get("headers") or {}).items()}
        for key, values in (result.get("multiValueHeaders") or {}).items():
            response_headers[str(key)] = ", ".join(str(v) for v in values)
        text = result.get("body") or ""
        if result.get("isBase64Encoded"):
            import base64

            text = base64.b64decode(text).decode("utf-8", "replace")
        return ApiResponse(int(result.get("statusCode", 200)), response_headers, text)

    # -- queues and events ---------------------------------------------------------------

    def pump(self) -> None:
        """Deliver everything due now: events on the bus and SQS messages, until quiet."""
        with self._lock:
            for _ in range(1000):
                moved = self._deliver_events() + self._deliver_sqs()
                if not moved:
                    return
            raise RuntimeError("local runtime: deliveries did not settle after 1000 rounds")

    def _deliver_events(self) -> int:
        pending, self._pending_events[:] = list(self._pending_events), []
        for envelope in pending:
            self.bus.put(envelope)
            self.published.append(envelope)
        delivered = self.bus.take()
        for function, envelope in delivered:
            self.invoke_async(function, envelope, f"eventbridge {envelope.get('detail-type')}")
        return len(delivered) + len(pending)

    def invoke_async(self, function: str, event: dict[str, Any], trigger: str) -> Invocation:
        """Invoke as Lambda does for asynchronous sources (EventBridge, schedules).

        A failed invocation is retried ``EventInvokeConfig.MaximumRetryAttempts`` times
        (default 2); after the last failure the event goes to the ``OnFailure`` SQS
        destination when the template gives one, wrapped like Lambda's destination
        record (``requestContext``, ``requestPayload``, ``responsePayload``).
        """
        spec = self.functions[function]
        record = self.invoke(function, event, trigger=trigger)
        for _retry in range(spec.async_retries):
            if record.ok:
                break
            record = self.invoke(function, event, trigger=f"{trigger} (retry)")
        if not record.ok and spec.on_failure_queue:
            failure = {
                "version": "1.0",
                "timestamp": iso_time(self.clock.now()),
                "requestContext": {
                    "requestId": str(uuid.uuid4()),
                    "functionArn": self.stack.get_att(function, "Arn") + ":$LATEST",
                    "condition": "RetriesExhausted",
                    "approximateInvokeCount": 1 + spec.async_retries,
                },
                "requestPayload": event,
                "responseContext": {"statusCode": 200, "functionError": "Unhandled"},
                "responsePayload": {"errorMessage": record.error},
            }
            self.sqs.send_message(
                QueueUrl=str(self.stack.ref(spec.on_failure_queue)),
                MessageBody=json.dumps(failure, default=str),
            )
        return record

    def _deliver_sqs(self) -> int:
        sqs = self.sqs
        handled = 0
        for trigger in self.stack.sqs_triggers():
            url = str(self.stack.ref(trigger.queue))
            arn = self.stack.get_att(trigger.queue, "Arn")
            visibility = int(
                sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])[
                    "Attributes"
                ]["VisibilityTimeout"]
            )
            while True:
                messages = sqs.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=min(trigger.batch_size, 10),
                    VisibilityTimeout=_REAL_VISIBILITY_SECONDS,
                    AttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
                if not messages:
                    break
                handled += len(messages)
                event = {"Records": [sqs_record(m, arn) for m in messages]}
                record = self.invoke(trigger.function, event, trigger=f"sqs {trigger.queue}")
                if not record.ok:
                    failed = {m["MessageId"] for m in messages}
                elif trigger.partial_failures and isinstance(record.result, dict):
                    failed = {
                        str(item.get("itemIdentifier"))
                        for item in record.result.get("batchItemFailures") or []
                    }
                else:
                    failed = set()
                for message in messages:
                    if message["MessageId"] in failed:
                        self._parked.append(
                            _Parked(url, message["ReceiptHandle"], self.clock.now() + visibility)
                        )
                    else:
                        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        return handled

    def _release_parked(self) -> None:
        sqs = self.sqs
        now = self.clock.now()
        due = [p for p in self._parked if p.due <= now]
        self._parked = [p for p in self._parked if p.due > now]
        for parked in due:
            sqs.change_message_visibility(
                QueueUrl=parked.queue_url, ReceiptHandle=parked.receipt_handle, VisibilityTimeout=0
            )

    def emit(self, envelope: dict[str, Any]) -> None:
        """Queue an event envelope for the bus (delivered by the next :meth:`pump`)."""
        with self._lock:
            self._pending_events.append(envelope)

    # -- time ----------------------------------------------------------------------------

    def _next_stop(self, target: float) -> float:
        stops = [target, *self._next_tick.values()]
        stops += [p.due for p in self._parked]
        if self.batch is not None:
            from quotagov.local.batch_setup import next_event_time

            upcoming = next_event_time(self.batch, self.job_queue, self.options.start)
            if upcoming is not None:
                stops.append(upcoming)
        now = self.clock.now()
        return max(now, min(s for s in stops if s > now) if any(s > now for s in stops) else now)

    def advance_to(self, target: float) -> float:
        """Move virtual time to ``target`` (epoch seconds), running everything on the way.

        The simulated Batch runs forward; its events, due SQS retries and scheduled
        rules are delivered at their virtual times. Returns the new time.

        Raises:
            ValueError: when ``target`` is in the past.
        """
        with self._lock:
            if target < self.clock.now():
                raise ValueError(f"advance: cannot go back from {self.clock.now()} to {target}")
            self.pump()
            while True:
                stop = self._next_stop(target)
                if self.batch is not None:
                    from quotagov.local.batch_setup import run_batch_until

                    run_batch_until(self.batch, self.clock, stop)
                else:
                    self.clock.set(stop)
                self._release_parked()
                self.pump()
                self._fire_schedules()
                self.pump()
                if self.clock.now() >= target:
                    return self.clock.now()

    def advance(self, seconds: float) -> float:
        """Move virtual time forward by ``seconds`` (see :meth:`advance_to`)."""
        if seconds < 0:
            raise ValueError(f"advance: seconds must be >= 0, got {seconds}")
        return self.advance_to(self.clock.now() + seconds)

    def _fire_schedules(self) -> None:
        now = self.clock.now()
        for trigger in self.stack.schedule_triggers():
            while self._next_tick[trigger.name] <= now:
                rule_arn = f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/{trigger.name}"
                event = scheduled_event(rule_arn, self._next_tick[trigger.name])
                self.invoke_async(trigger.function, event, f"schedule {trigger.name}")
                self._next_tick[trigger.name] += trigger.every_seconds

    # -- administrators ------------------------------------------------------------------

    def admin_batch(
        self, principal: str, operation: str, request: dict[str, Any]
    ) -> dict[str, Any]:
        """Make a Batch API call as ``principal`` (e.g. ``UpdateQuotaShare``), as an admin would.

        Mutating calls are recorded as CloudTrail events and routed like any other.

        Raises:
            ValueError: for an operation the Batch port does not have.
            quotagov.governance.ports.BatchError: what Batch answered.
        """
        method = _snake(operation)
        with self._lock:
            if not hasattr(self.batch, method):
                raise ValueError(f"Batch operation {operation!r} is not supported locally")
            self._caller.append(principal)
            try:
                response: dict[str, Any] = getattr(self.recording_batch, method)(**request)
            finally:
                self._caller.pop()
                self.pump()
            return response

    # -- reading state (what an operator would look at) -----------------------------------

    def stored_escalation(self, escalation_id: str) -> dict[str, Any]:
        """The escalation as stored in ``EscalationsTable`` (the API shape), ``{}`` if absent."""
        with self._lock:
            self._set_env(self.environments["EscalationsApiFunction"])
            found = wiring.services().escalations_table.get(escalation_id)
            return {} if found is None else dict(found.to_api())

    def audit_records(self) -> list[dict[str, Any]]:
        """Every record of every audit hash chain, chain by chain in ``seq`` order."""
        with self._lock:
            store = wiring.services().audit_chains
            return [record for chain in store.chains() for record in store.records(chain)]

    def audit_verify(self) -> bool:
        """``quotagov audit verify``: True when every hash chain is intact (and one exists)."""
        from quotagov.governance.audit.review import verify

        with self._lock:
            reports = verify(wiring.services().audit_chains)
            return bool(reports) and all(report.first_break is None for report in reports)


def _snake(operation: str) -> str:
    out = []
    for index, char in enumerate(operation):
        if char.isupper() and index:
            out.append("_")
        out.append(char.lower())
    return "".join(out)


def _env_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
