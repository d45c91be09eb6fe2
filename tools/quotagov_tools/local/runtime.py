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
- IAM: what each function's code calls is kept by IAM action in
  :attr:`LocalRuntime.action_log` (:mod:`.actions`), to hold against the template's
  grants; :meth:`LocalRuntime.cold_start` gives every function a new instance.

One invocation runs at a time (the runtime holds a lock, like a function with a
reserved concurrency of one), which keeps moto's in-memory backends consistent when
``quotagov serve`` answers HTTP requests on several threads.

This module is the runtime's lifecycle (start, provisioning, stop), its virtual time
and its public surface; the parts it plays live beside it: :mod:`.invoker` (Lambda:
a handler run with its template environment), :mod:`.api_gateway` (request -> proxy
event -> response), :mod:`.delivery` (the bus, SQS mappings, async invocations,
schedules), :mod:`.provision` (the template's resources in moto), :mod:`.reads` (what
an operator would look at).
"""

from __future__ import annotations

import functools
import json
import math
import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import quotagov
from quotagov import composition
from quotagov.clock import ManualClock
from quotagov.governance.audit.review import ChainReport
from quotagov.settings import Settings
from quotagov_tools.deploy.template import load_template
from quotagov_tools.local import api_gateway, reads
from quotagov_tools.local.actions import ActionLog, ActionRecordingBatch
from quotagov_tools.local.api_gateway import ApiResponse
from quotagov_tools.local.cloudtrail import CloudTrailRecordingBatch
from quotagov_tools.local.delivery import Deliveries
from quotagov_tools.local.eventbus import LocalEventBus
from quotagov_tools.local.faults import BotocoreFaults, FaultPlan, FaultyBatch, SkippedBackoff
from quotagov_tools.local.invoker import (
    Handler,
    Invocation,
    Invoker,
    ProcessEnvironment,
    function_environments,
)
from quotagov_tools.local.stack import (
    ACCOUNT_ID,
    REGION,
    ApiRoute,
    FunctionSpec,
    Stack,
    default_template_path,
)

EXAMPLES = Path(quotagov.__file__).resolve().parent / "examples"
#: The example policy the runtime loads into the SSM policy parameter.
DEFAULT_POLICY = EXAMPLES / "policy.yaml"
#: The walkthrough whose capacity and quota shares the simulated Batch starts with.
DEFAULT_WALKTHROUGH = EXAMPLES / "aws-walkthrough.json"
#: Virtual time 0 of the walkthrough: 2026-05-04T09:00:00Z (epoch seconds).
DEFAULT_EPOCH = 1777885200.0

#: The process environment of every local command: moto's credentials and account,
#: Powertools without X-Ray.
_AWS_ENVIRONMENT = {
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


@dataclass
class RuntimeOptions:
    """How to build a :class:`LocalRuntime`.

    Attributes:
        template: the SAM template (default:
            :func:`quotagov_tools.local.stack.default_template_path`).
        policy: the governance policy YAML put into the SSM policy parameter.
        walkthrough: the scenario whose capacity and quota shares the simulated Batch uses.
        start: virtual epoch seconds at which the clock starts.
        slack_signing_secret: stored in the Slack secret (random when ``None``).
        slack_bot_token: the bot token stored in the secret and expected by the fake Slack.
        extra_env: more environment variables for every function.
        simulated_batch: build the simulated Batch (off only for runtime tests of a
            template without Batch).
        faults: inject the plan's faults into every outside dependency
            (:mod:`quotagov_tools.local.faults`); None: no faults.
    """

    template: Path | None = None
    policy: Path = DEFAULT_POLICY
    walkthrough: Path = DEFAULT_WALKTHROUGH
    start: float = DEFAULT_EPOCH
    slack_signing_secret: str | None = None
    slack_bot_token: str = "xoxb-quotagov-local"
    extra_env: dict[str, str] = field(default_factory=dict)
    simulated_batch: bool = True
    faults: FaultPlan | None = None


def _snake(operation: str) -> str:
    """``UpdateQuotaShare`` -> ``update_quota_share`` (the Batch port's method name)."""
    out = []
    for index, char in enumerate(operation):
        if char.isupper() and index:
            out.append("_")
        out.append(char.lower())
    return "".join(out)


#: Longest move of virtual time in one call (7 days): the 5-minute expiry schedule runs
#: its handler at every tick on the way (an idle day took 8 s on a loaded 2-core
#: machine), so a far target would keep the runtime, and ``serve``, busy for hours.
MAX_ADVANCE_SECONDS = 7 * 86_400


class LocalRuntime:
    """The embedded runtime; use as a context manager or call :meth:`start`/:meth:`stop`.

    Raises:
        quotagov_tools.deploy.template.TemplateError: from :meth:`start` when the template cannot
            be provisioned.
    """

    def __init__(self, options: RuntimeOptions | None = None) -> None:
        self.options = options or RuntimeOptions()
        self.clock = ManualClock(self.options.start)
        self.signing_secret = self.options.slack_signing_secret or secrets.token_hex(16)
        self._lock = threading.RLock()
        self._environment = ProcessEnvironment()
        self._invoker = Invoker(self.clock, self._lock, self._environment)
        self._deliveries = Deliveries(
            self._invoker, self.clock, self._lock, faults=self.options.faults
        )
        self._saved_endpoint_time: Any = None
        self._mock: Any = None
        self._guarded = False
        self.stack: Stack
        self.routes: list[ApiRoute] = []
        self.slack: Any = None
        self.batch: Any = None
        self.recording_batch: Any = None
        #: Every AWS call each function's code made, by IAM action (:mod:`.actions`).
        self.action_log = ActionLog(self._invoker.current_function)
        self.policy_text = self.options.policy.read_text(encoding="utf-8")
        self.walkthrough: dict[str, Any] = json.loads(
            self.options.walkthrough.read_text(encoding="utf-8")
        )

    # -- what the runtime holds -----------------------------------------------------

    @property
    def functions(self) -> dict[str, FunctionSpec]:
        """The template's functions by logical id (empty until :meth:`start`)."""
        return self._invoker.functions

    @property
    def environments(self) -> dict[str, dict[str, str]]:
        """Each function's environment variables, resolved (empty until :meth:`start`)."""
        return self._invoker.environments

    @property
    def invocations(self) -> list[Invocation]:
        """Every handler invocation so far, in order."""
        return self._invoker.invocations

    @property
    def published(self) -> list[dict[str, Any]]:
        """Every event put on the bus (Batch state changes, CloudTrail calls), in order."""
        return self._deliveries.published

    @property
    def bus(self) -> LocalEventBus:
        """The template's EventBridge rules in moto (set by :meth:`start`)."""
        return self._deliveries.bus

    @property
    def sqs(self) -> Any:
        """The runtime's own SQS client (moto)."""
        return self._deliveries.sqs

    @functools.cached_property
    def job_queue(self) -> str:
        """The governed job queue ARN (the policy's ``jobQueue``)."""
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        document = yaml.load(self.policy_text, Loader=loader)
        return str(document["jobQueue"])

    # -- lifecycle ------------------------------------------------------------------

    def __enter__(self) -> LocalRuntime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> LocalRuntime:
        """Start moto, the fake Slack and the simulated Batch; provision the template.

        From here to :meth:`stop`, the process reaches loopback only
        (:class:`~quotagov_tools.local.loopback.LoopbackGuard`): an event naming a real host,
        such as a recorded Slack click's ``response_url``, fails to connect instead.
        """
        from quotagov_tools.local.loopback import LoopbackGuard

        if not self._guarded:
            LoopbackGuard.install()
            self._guarded = True
        self._environment.set(_AWS_ENVIRONMENT)
        os.environ.pop("AWS_ENDPOINT_URL", None)
        from moto import mock_aws

        self._mock = mock_aws()
        self._mock.start()
        self._watch_boto3_calls()
        from quotagov_tools.local.fake_slack import FakeSlack

        self.slack = FakeSlack(
            token=self.options.slack_bot_token, faults=self.options.faults
        ).start()
        try:
            self._provision()
            if self.options.simulated_batch:
                self._build_batch()
            self._wire()
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
        if self._saved_endpoint_time is not None:
            import botocore.endpoint

            botocore.endpoint.time = self._saved_endpoint_time  # type: ignore[attr-defined]
            self._saved_endpoint_time = None
        self._environment.restore()
        composition.reset()
        if self._guarded:
            from quotagov_tools.local.loopback import LoopbackGuard

            LoopbackGuard.uninstall()
            self._guarded = False

    def _provision(self) -> None:
        """Create the template's resources in moto; set up functions, routes and the bus."""
        from quotagov_tools.local.provision import (
            LocalValues,
            Provisioner,
            parameter_values,
            resource_values,
        )

        template = load_template(self.options.template or default_template_path())
        slack_secret = json.dumps(
            {"botToken": self.options.slack_bot_token, "signingSecret": self.signing_secret}
        )
        values = LocalValues(self.job_queue, self.policy_text, slack_secret)
        self.stack = Stack(template, parameter_values(template, values))
        functions = self.stack.functions()
        Provisioner(self.stack, resource_values(self.stack, functions, values)).provision()
        local_env = {
            "SLACK_API_URL": self.slack.base_url,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
            **self.options.extra_env,
        }
        environments = function_environments(self.stack, functions, local_env, self.job_queue)
        self._invoker.load(functions, environments)
        # Every quotagov setting is blanked outside the invocations, which set exactly
        # their function's variables (Invoker): a variable in the caller's environment
        # (e.g. AUDIT_DIGEST_PUBLIC_KEY left by an in-process `audit verify
        # --public-key`) cannot point this stack at another's resources.
        self._environment.set(dict.fromkeys(Settings.variables(), ""))
        self.routes = self.stack.api_routes()
        self._deliveries.connect(self.stack, LocalEventBus(self.stack.rule_triggers()))

    def _build_batch(self) -> None:
        """The simulated Batch, recorded as CloudTrail would, injected through the wiring."""
        from quotagov_tools.local.batch_setup import build_simulated_batch

        self.batch = build_simulated_batch(
            clock=self.clock,
            job_queue=self.job_queue,
            walkthrough=self.walkthrough,
            emit=self._deliveries.emit,
        )
        recording = CloudTrailRecordingBatch(
            self.batch,
            principal=self._invoker.current_caller,
            clock=self.clock,
            emit=self._deliveries.emit,
            role_arns=self.stack.role_arns(),
        )
        self.recording_batch = recording

    def _wire(self) -> None:
        """Fresh compositions for every function (:mod:`quotagov.composition`), each built
        at its function's first invocation from exactly that function's environment,
        with the runtime's clock and, when simulated, its Batch (calls recorded in
        :attr:`action_log`) injected."""
        values: dict[str, Any] = {"clock": self.clock}
        if self.recording_batch is not None:
            batch: Any = ActionRecordingBatch(self.recording_batch, self.action_log)
            if self.options.faults is not None:
                batch = FaultyBatch(
                    batch, self.batch, self.options.faults, self._invoker.current_function
                )
            values["batch"] = batch
        composition.inject(None, **values)

    def composition_of(self, function: str) -> composition.Composition:
        """``function``'s composition as its handler sees it (built, if not yet, from
        exactly its environment), for reading the stack as an operator would.

        Raises:
            KeyError: no such function.
        """
        with self._lock:
            self._invoker.use_environment(function)
            return composition.current(composition.COMPOSITIONS[function])

    def _watch_boto3_calls(self) -> None:
        """Record the functions' boto3 calls in :attr:`action_log`: moto gives every
        local command a fresh default boto3 session, which the functions' clients come
        from; its botocore ``before-parameter-build`` event names each operation and
        its parameters."""
        import boto3

        if boto3.DEFAULT_SESSION is None:
            boto3.setup_default_session()
        session = boto3.DEFAULT_SESSION
        assert session is not None
        session.events.register("before-parameter-build", self.action_log.on_botocore_call)
        plan = self.options.faults
        if plan is not None:
            import botocore.endpoint

            BotocoreFaults(plan, self._invoker.current_function).install(session.events)
            self._saved_endpoint_time = botocore.endpoint.time  # type: ignore[attr-defined]
            botocore.endpoint.time = SkippedBackoff(plan)  # type: ignore[attr-defined]

    def cold_start(self) -> None:
        """Start every function cold, as new Lambda instances would: the next invocations
        build their dependencies afresh (clients, caches such as the audit writer's
        vouched chain heads). The stack's state, the clock and Batch stay as they are.

        Raises:
            RuntimeError: the runtime is not started.
        """
        if self._mock is None:
            raise RuntimeError("the local runtime is not started")
        with self._lock:
            composition.cold_start()

    # -- invoking handlers -------------------------------------------------------------

    def handler_for(self, function: str) -> Handler:
        """Import and return the handler callable of ``function`` (a template logical id).

        Raises:
            KeyError: when the template has no such function.
        """
        return self._invoker.handler_for(function)

    def invoke(self, function: str, event: dict[str, Any], trigger: str = "invoke") -> Invocation:
        """Run ``function``'s handler on ``event`` with a fake Lambda context; never raises.

        The function's template environment is in ``os.environ`` during the call and
        its Batch calls are recorded with the function's role as the caller.
        """
        return self._invoker.invoke(function, event, trigger)

    def invoke_directly(self, function: str, event: dict[str, Any], caller: str) -> Invocation:
        """``lambda:InvokeFunction`` on ``function`` by ``caller`` (a principal ARN), not by
        its trigger: the handler runs on ``event`` as :meth:`invoke` runs it, and the
        CloudTrail data event a trail logging Lambda data events would record goes on the
        bus, where the template's rule hands it to the audit function (delivered now).
        """
        from quotagov_tools.local.cloudtrail import lambda_invoke_envelope

        invocation = self.invoke(function, event, trigger=f"direct by {caller}")
        self.emit(
            lambda_invoke_envelope(
                function_arn=self.stack.get_att(function, "Arn"),
                principal_arn=caller,
                at=self.clock.now(),
                role_arns=self.stack.role_arns(),
            )
        )
        self.pump()
        return invocation

    def invoke_async(self, function: str, event: dict[str, Any], trigger: str) -> Invocation:
        """Invoke as Lambda does for asynchronous sources (EventBridge, schedules).

        Retries and the ``OnFailure`` destination as in
        :meth:`quotagov_tools.local.delivery.Deliveries.invoke_async`.
        """
        return self._deliveries.invoke_async(function, event, trigger)

    # -- API Gateway ---------------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[ApiRoute, dict[str, str]] | None:
        """Find the template route for ``method path`` and its path parameters."""
        return api_gateway.find_route(self.routes, method, path)

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
        answers. A dict ``body`` is sent as JSON. ``pump=False`` leaves what the
        request set off for the next :meth:`pump`.
        """
        raw, sent = api_gateway.request_body(body, headers)
        found = self.route(method, path)
        if found is None:
            return api_gateway.not_found()
        route = found[0]
        if route.iam_auth and not principal:
            return api_gateway.missing_authentication_token()
        event = api_gateway.proxy_event(
            self.stack,
            found,
            method=method,
            path=path,
            principal=principal,
            body=raw,
            headers=sent,
            query=query,
            now=self.clock.now,
        )
        with self._lock:
            record = self.invoke(route.function, event, trigger=f"api {method} {route.path}")
            if pump:
                self.pump()
        return api_gateway.proxy_response(record)

    # -- queues and events ---------------------------------------------------------------

    def pump(self) -> None:
        """Deliver everything due now: events on the bus and SQS messages, until quiet.

        Raises:
            RuntimeError: when deliveries keep causing deliveries for 1000 rounds.
        """
        self._deliveries.pump()

    def emit(self, envelope: dict[str, Any]) -> None:
        """Queue an event envelope for the bus (delivered by the next :meth:`pump`)."""
        self._deliveries.emit(envelope)

    # -- time ----------------------------------------------------------------------------

    def _next_stop(self, target: float) -> float:
        """The next virtual time at which something is due, ``target`` at the latest."""
        stops = [target, *self._deliveries.due_times()]
        if self.batch is not None:
            from quotagov_tools.local.batch_setup import next_event_time

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
            ValueError: when ``target`` is not a finite number (NaN would never be
                reached), is in the past, or more than :data:`MAX_ADVANCE_SECONDS` ahead;
                the message says the fault only (the caller names the field).
        """
        if isinstance(target, bool) or not math.isfinite(target):
            raise ValueError(f"must be a finite number of epoch seconds, got {target!r}")
        with self._lock:
            if target - self.clock.now() > MAX_ADVANCE_SECONDS:
                raise ValueError(
                    f"at most {MAX_ADVANCE_SECONDS} s (7 days) ahead per call, "
                    f"got {target - self.clock.now():.0f} s"
                )
            if target < self.clock.now():
                raise ValueError(f"cannot go back from {self.clock.now()} to {target}")
            self.pump()
            while True:
                stop = self._next_stop(target)
                if self.batch is not None:
                    from quotagov_tools.local.batch_setup import run_batch_until

                    run_batch_until(self.batch, self.clock, stop)
                else:
                    self.clock.set(stop)
                self._deliveries.release_parked()
                self.pump()
                self._deliveries.fire_schedules()
                self.pump()
                if self.clock.now() >= target:
                    return self.clock.now()

    def advance(self, seconds: float) -> float:
        """Move virtual time forward by ``seconds`` (see :meth:`advance_to`).

        Raises:
            ValueError: when ``seconds`` is negative or not finite (see :meth:`advance_to`).
        """
        if isinstance(seconds, bool) or not math.isfinite(seconds):
            raise ValueError(f"must be a finite number of seconds, got {seconds!r}")
        if seconds < 0:
            raise ValueError(f"must be >= 0 seconds, got {seconds}")
        return self.advance_to(self.clock.now() + seconds)

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
            try:
                with self._invoker.acting_as(principal):
                    response: dict[str, Any] = getattr(self.recording_batch, method)(**request)
            finally:
                self.pump()
            return response

    # -- reading state (what an operator would look at) -----------------------------------

    def stored_escalation(self, escalation_id: str) -> dict[str, Any]:
        """The escalation as stored in ``EscalationsTable`` (the API shape), ``{}`` if absent."""
        built = self.composition_of("EscalationsApiFunction")
        with self._lock:
            return reads.stored_escalation(built.escalations_table, escalation_id)

    def audit_records(self) -> list[dict[str, Any]]:
        """Every record of every audit hash chain, chain by chain in ``seq`` order."""
        built = self.composition_of("AuditFunction")
        with self._lock:
            return reads.audit_records(built.audit_chains)

    def notifications(self) -> list[dict[str, Any]]:
        """Every owner notification in the notification log, oldest first
        (:func:`quotagov_tools.local.reads.notifications`)."""
        built = self.composition_of("JobStateFunction")
        with self._lock:
            return reads.notifications(built.notification_log)

    def audit_reports(self) -> list[ChainReport]:
        """``quotagov audit verify``: each chain's report (links, dedup markers, seals
        with the moto KMS HMAC key, every signed digest in the moto Object Lock bucket)."""
        built = self.composition_of("AuditDigestFunction")
        with self._lock:
            return reads.audit_reports(
                built.audit_chains, built.audit_digest_source(), built.audit_sealer
            )

    def audit_verify(self) -> bool:
        """``quotagov audit verify``: True when every chain is intact (and one exists)."""
        return reads.chains_intact(self.audit_reports())

    def publish_digests(self, *, force: bool = True) -> dict[str, Any]:
        """Invoke ``AuditDigestFunction`` on demand (``{"force": true}``); its answer."""
        with self._lock:
            record = self.invoke("AuditDigestFunction", {"force": force}, trigger="invoke")
            self.pump()
        if record.error:
            raise RuntimeError(f"AuditDigestFunction failed: {record.error}")
        return dict(record.result or {})
