"""Slack adapter: :class:`~quotagov.governance.ports.ChatNotifier` over slack_sdk's WebClient.

Credentials live in two Secrets Manager secrets: the bot token in ``SLACK_SECRET_ARN``
(JSON ``{"botToken": "xoxb-..."}``, read by every function that posts) and the request
signing secret in ``SLACK_SIGNING_SECRET_ARN`` (JSON ``{"signingSecret": "..."}``, read
by the Slack function only; its resource policy refuses everyone else). A bot-token
secret that still carries ``signingSecret`` (one secret for both, as before) is read
too. Both are read with Powertools Parameters ``get_secret`` and cached (default 300 s,
``POWERTOOLS_PARAMETERS_MAX_AGE``).
``SLACK_API_URL`` overrides the Web API base URL (the local runtime and the tests point
it at :class:`quotagov_tools.local.fake_slack.FakeSlack`); slack_sdk joins method names to it
with ``urljoin``, so it must end with ``/`` (slack_sdk's source,
``slack_sdk/web/internal_utils.py``).

Rate limiting and transient faults: ``chat.postMessage`` allows about one message per
second per channel; the client carries slack_sdk's retry handlers. HTTP 429 answers are
retried after ``Retry-After`` (slack_sdk's ``RateLimitErrorRetryHandler``, as
:class:`BoundedRateLimitRetryHandler`; Slack, "Rate limits",
https://docs.slack.dev/apis/web-api/rate-limits), at most twice and only when Slack asks
to wait at most :data:`MAX_RETRY_AFTER_SECONDS`: a longer wait would outlast the Lambda
function, so the call fails with ``ratelimited`` and its caller's own retry takes over (a
card update is retried by the scheduled run,
:mod:`quotagov.governance.escalations.messages`). A connection that gave no answer is
tried again (``ConnectionErrorRetryHandler``), and an HTTP 200 answer
``{"ok": false, "error": "ratelimited"}`` is retried like a 429
(:class:`RatelimitedRetryHandler`). A message Slack refuses with ``msg_too_long`` is sent
once more in a short form: its notification text and its buttons only (a card awaiting a
decision keeps its buttons, a decided card shows its outcome and none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.utilities import parameters
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import (
    ConnectionErrorRetryHandler,
    HttpRequest,
    HttpResponse,
    RateLimitErrorRetryHandler,
    RetryHandler,
    RetryState,
)
from slack_sdk.webhook import WebhookClient

from quotagov.governance.ports import ChatError, PostedMessage

DEFAULT_SLACK_API_URL = "https://slack.com/api/"

#: The longest ``Retry-After`` (seconds) a call waits out in-process; Slack asking for
#: longer fails the call with ``ratelimited`` (the functions time out at 30 s).
MAX_RETRY_AFTER_SECONDS = 10


class BoundedRateLimitRetryHandler(RateLimitErrorRetryHandler):
    """slack_sdk's ``RateLimitErrorRetryHandler`` (retries HTTP 429 after waiting
    ``Retry-After`` seconds), except when ``Retry-After`` exceeds ``max_wait`` seconds.

    Args:
        max_retry_count: retries of one call (not counting the first attempt).
        max_wait: the longest ``Retry-After`` waited out, seconds.
    """

    def __init__(self, max_retry_count: int = 2, max_wait: int = MAX_RETRY_AFTER_SECONDS) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait = max_wait

    def _can_retry(
        self, *, state: Any, request: Any, response: Any = None, error: Any = None
    ) -> bool:
        if not super()._can_retry(state=state, request=request, response=response, error=error):
            return False
        for name, values in response.headers.items():
            if name.lower() == "retry-after":
                try:
                    return int(values[0]) <= self.max_wait
                except (ValueError, IndexError, TypeError):
                    return True
        return True


@dataclass(frozen=True)
class SlackCredentials:
    """The Slack app's bot token (``xoxb-...``) and request signing secret (``""`` when
    the bot-token secret does not carry it: it lives in its own secret)."""

    bot_token: str
    signing_secret: str

    def __repr__(self) -> str:  # never print secrets in logs
        return "SlackCredentials(bot_token=***, signing_secret=***)"


def _secret_fields(
    raw: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, str]:
    """The string fields of a secret value (dict or JSON text); ``optional`` ones may be absent.

    Raises:
        ValueError: naming the missing or empty field, or when the value is not JSON.
    """
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ValueError("Slack secret: value is not JSON") from None
    if not isinstance(raw, dict):
        raise ValueError("Slack secret: value must be a JSON object")
    values: dict[str, str] = {}
    for key in (*required, *optional):
        value = raw.get(key)
        if key in optional and value is None:
            continue
        if not isinstance(value, str) or not value:
            raise ValueError(f"Slack secret: field {key!r} is missing or empty")
        values[key] = value
    return values


def parse_slack_secret(raw: Any) -> SlackCredentials:
    """Read ``{"botToken"}`` (and ``signingSecret`` when present) from the secret value.

    Raises:
        ValueError: naming the missing or empty field, or when the value is not JSON.
    """
    values = _secret_fields(raw, ("botToken",), ("signingSecret",))
    return SlackCredentials(
        bot_token=values["botToken"], signing_secret=values.get("signingSecret", "")
    )


def parse_signing_secret(raw: Any) -> str:
    """Read ``{"signingSecret"}`` from the signing secret's value (dict or JSON text).

    Raises:
        ValueError: naming the missing or empty field, or when the value is not JSON.
    """
    return _secret_fields(raw, ("signingSecret",))["signingSecret"]


def load_signing_secret(secret_arn: str) -> str:
    """Fetch the Slack signing secret (``SLACK_SIGNING_SECRET_ARN``) through Powertools
    Parameters (cached 300 s).

    Raises:
        ValueError: when the secret's JSON lacks ``signingSecret``.
        aws_lambda_powertools.utilities.parameters.GetParameterError: when it cannot be
            read (its resource policy admits the Slack function's role only).
    """
    return parse_signing_secret(parameters.get_secret(secret_arn))


def load_slack_credentials(secret_arn: str, *, max_age: int | None = None) -> SlackCredentials:
    """Fetch and parse the Slack secret through Powertools Parameters (cached).

    Args:
        secret_arn: ARN or name of the Secrets Manager secret (``SLACK_SECRET_ARN``).
        max_age: cache lifetime in seconds; Powertools' default (300 s) when None.

    Raises:
        ValueError: when the secret's JSON lacks a field (see :func:`parse_slack_secret`).
        aws_lambda_powertools.utilities.parameters.GetParameterError: when it cannot be read.
    """
    if max_age is None:
        raw = parameters.get_secret(secret_arn)
    else:
        raw = parameters.get_secret(secret_arn, max_age=max_age)
    return parse_slack_secret(raw)


class RatelimitedRetryHandler(RetryHandler):
    """slack_sdk retry handler for an HTTP 200 ``{"ok": false, "error": "ratelimited"}``
    (a rate limit Slack reports in the body instead of with a 429); waits slack_sdk's
    default backoff between tries."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        body = response.body if response is not None else None  # the parsed JSON answer
        return isinstance(body, dict) and body.get("error") == "ratelimited"


def build_web_client(
    token: str, base_url: str = "", *, max_rate_limit_retries: int = 2
) -> WebClient:
    """A WebClient for ``token`` at ``base_url`` (Slack's when empty) retrying HTTP 429s.

    Raises:
        ValueError: when ``base_url`` does not end with ``/`` (slack_sdk would then
            call the wrong URLs).
    """
    url = base_url or DEFAULT_SLACK_API_URL
    if not url.endswith("/"):
        raise ValueError(f"SLACK_API_URL must end with '/': got {url!r}")
    return WebClient(
        token=token,
        base_url=url,
        timeout=5,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            BoundedRateLimitRetryHandler(max_retry_count=max_rate_limit_retries),
            RatelimitedRetryHandler(max_retry_count=max_rate_limit_retries),
        ],
    )


class SlackChatNotifier:
    """:class:`~quotagov.governance.ports.ChatNotifier` through ``chat.postMessage`` and
    ``chat.update`` (Slack Web API; scope ``chat:write``).

    Every failure, whether Slack's ``{"ok": false, "error": ...}`` or a transport
    fault, is raised as :class:`~quotagov.governance.ports.ChatError` carrying Slack's
    error code (e.g. ``channel_not_found``, ``message_not_found``).
    """

    def __init__(self, client: WebClient) -> None:
        self.client = client

    def post(self, channel: str, text: str, blocks: list[dict[str, Any]]) -> PostedMessage:
        """Post ``text`` + ``blocks`` to ``channel``; returns the channel id and ``ts``."""
        try:
            try:
                response = self.client.chat_postMessage(channel=channel, text=text, blocks=blocks)
            except SlackApiError as error:
                if _slack_error(error) != "msg_too_long" or not blocks:
                    raise
                response = self.client.chat_postMessage(
                    channel=channel, text=text, blocks=_short_form(text, blocks)
                )
        except SlackApiError as error:
            raise ChatError(_slack_error(error)) from error
        except (SlackClientError, OSError) as error:
            raise ChatError(f"transport: {error}") from error
        return PostedMessage(channel=str(response["channel"]), ts=str(response["ts"]))

    def update(self, message: PostedMessage, text: str, blocks: list[dict[str, Any]]) -> None:
        """Replace the text and blocks of ``message`` with ``chat.update``."""
        try:
            try:
                self.client.chat_update(
                    channel=message.channel, ts=message.ts, text=text, blocks=blocks
                )
            except SlackApiError as error:
                if _slack_error(error) != "msg_too_long" or not blocks:
                    raise
                self.client.chat_update(
                    channel=message.channel,
                    ts=message.ts,
                    text=text,
                    blocks=_short_form(text, blocks),
                )
        except SlackApiError as error:
            raise ChatError(_slack_error(error)) from error
        except (SlackClientError, OSError) as error:
            raise ChatError(f"transport: {error}") from error


def respond(response_url: str, text: str, blocks: list[dict[str, Any]]) -> None:
    """Replace the original message through an interaction's ``response_url``.

    Slack accepts 5 uses within 30 minutes (Slack, "Handling user interaction in your
    Slack apps", https://docs.slack.dev/interactivity/handling-user-interaction).

    Raises:
        ChatError: when Slack does not answer HTTP 200 or cannot be reached.
    """
    try:
        response = WebhookClient(response_url, timeout=3).send(
            text=text, blocks=blocks, replace_original=True
        )
    except (SlackClientError, OSError) as error:
        raise ChatError(f"transport: {error}") from error
    if response.status_code != 200:
        raise ChatError(response.body or f"HTTP {response.status_code}")


def respond_ephemeral(response_url: str, text: str) -> None:
    """Tell only the user who clicked (``response_type: ephemeral``) through ``response_url``.

    Raises:
        ChatError: when Slack does not answer HTTP 200 or cannot be reached.
    """
    try:
        response = WebhookClient(response_url, timeout=3).send(
            text=text, response_type="ephemeral", replace_original=False
        )
    except (SlackClientError, OSError) as error:
        raise ChatError(f"transport: {error}") from error
    if response.status_code != 200:
        raise ChatError(response.body or f"HTTP {response.status_code}")


def _short_form(text: str, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks of a message Slack refused as ``msg_too_long``: its notification
    ``text`` (cut to a section's 3,000 characters) and its ``actions`` blocks only, so a
    card awaiting a decision keeps its buttons and a decided one shows none."""
    section = {"type": "section", "text": {"type": "plain_text", "text": text[:3000] or " "}}
    return [section, *(block for block in blocks if block.get("type") == "actions")]


def _slack_error(error: SlackApiError) -> str:
    data = getattr(error.response, "data", None)
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return str(error)
