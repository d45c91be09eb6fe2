"""Slack adapter: :class:`~quotagov.governance.ports.ChatNotifier` over slack_sdk's WebClient.

Credentials live in one Secrets Manager secret (``SLACK_SECRET_ARN``) holding JSON
``{"botToken": "xoxb-...", "signingSecret": "..."}``; they are read with Powertools
Parameters ``get_secret`` and cached (default 300 s, ``POWERTOOLS_PARAMETERS_MAX_AGE``).
``SLACK_API_URL`` overrides the Web API base URL (the local runtime and the tests point
it at :class:`quotagov_tools.local.fake_slack.FakeSlack`); slack_sdk joins method names to it
with ``urljoin``, so it must end with ``/`` (slack_sdk's source,
``slack_sdk/web/internal_utils.py``).

Rate limiting: ``chat.postMessage`` allows about one message per second per channel;
the client carries slack_sdk's ``RateLimitErrorRetryHandler`` so HTTP 429 answers are
retried after ``Retry-After`` instead of failing the request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.utilities import parameters
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import RateLimitErrorRetryHandler
from slack_sdk.webhook import WebhookClient

from quotagov.governance.ports import ChatError, PostedMessage

DEFAULT_SLACK_API_URL = "https://slack.com/api/"


@dataclass(frozen=True)
class SlackCredentials:
    """The Slack app's bot token (``xoxb-...``) and request signing secret."""

    bot_token: str
    signing_secret: str

    def __repr__(self) -> str:  # never print secrets in logs
        return "SlackCredentials(bot_token=***, signing_secret=***)"


def parse_slack_secret(raw: Any) -> SlackCredentials:
    """Read ``{"botToken", "signingSecret"}`` from the secret value (dict or JSON text).

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
    for key in ("botToken", "signingSecret"):
        value = raw.get(key)
        if not isinstance(value, str) or not value:
            raise ValueError(f"Slack secret: field {key!r} is missing or empty")
        values[key] = value
    return SlackCredentials(bot_token=values["botToken"], signing_secret=values["signingSecret"])


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
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=max_rate_limit_retries)],
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
            response = self.client.chat_postMessage(channel=channel, text=text, blocks=blocks)
        except SlackApiError as error:
            raise ChatError(_slack_error(error)) from error
        except (SlackClientError, OSError) as error:
            raise ChatError(f"transport: {error}") from error
        return PostedMessage(channel=str(response["channel"]), ts=str(response["ts"]))

    def update(self, message: PostedMessage, text: str, blocks: list[dict[str, Any]]) -> None:
        """Replace the text and blocks of ``message`` with ``chat.update``."""
        try:
            self.client.chat_update(
                channel=message.channel, ts=message.ts, text=text, blocks=blocks
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


def _slack_error(error: SlackApiError) -> str:
    data = getattr(error.response, "data", None)
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return str(error)
