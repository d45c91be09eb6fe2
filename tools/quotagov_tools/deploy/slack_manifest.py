"""The Slack app manifest of quotagov's approval app (``slack/manifest.yaml``).

One app: a bot that posts approval cards and owner messages (``chat.postMessage``,
``chat.update``: scope ``chat:write``) and receives button clicks (``block_actions``)
at the stack's ``SlackInteractivityUrl`` output. Slack creates the app from this file
(api.slack.com/apps > Create New App > From an app manifest); the fields and limits are
Slack's app manifest reference, https://docs.slack.dev/reference/app-manifest.

:func:`manifest` builds it for an interactivity URL; ``slack/manifest.yaml`` is it with
:data:`PLACEHOLDER_URL` (``quotagov slack-manifest --write slack/manifest.yaml``
regenerates it; a test fails when it drifts), and ``quotagov slack-manifest --stack
NAME`` prints it with the deployed stack's URL filled in.
"""

from __future__ import annotations

from typing import Any

import yaml

#: The request URL of the committed file: replace it, or render with ``--stack``.
PLACEHOLDER_URL = "https://API_ID.execute-api.REGION.amazonaws.com/v1/slack/interactions"
#: Where the repository keeps the manifest.
MANIFEST_PATH = "slack/manifest.yaml"
#: Bot token scopes: ``chat:write`` covers ``chat.postMessage`` (channels the app is in,
#: and direct messages to a user id) and ``chat.update`` of its own messages.
BOT_SCOPES = ("chat:write",)

_LONG_DESCRIPTION = (
    "quotagov governs a shared AWS Batch job queue of SageMaker Training jobs. When a "
    "researcher asks for a higher priority level than their team may set directly, this "
    "app posts the request to the quota share's approval channel with an impact preview: "
    "which running jobs approval would preempt and how much unsaved work they hold. An "
    "approver clicks Approve or Deny; nobody approves their own request. The app also "
    "tells job owners when their jobs are preempted, failed, resubmitted or moved."
)


def manifest(interactivity_url: str = PLACEHOLDER_URL, name: str = "quotagov") -> dict[str, Any]:
    """The manifest as a mapping, Slack's schema version 1.

    Args:
        interactivity_url: the ``SlackInteractivityUrl`` stack output (https).
        name: the app's and bot's name (at most 35 characters).

    Raises:
        ValueError: ``interactivity_url`` is not https, or ``name`` is too long.
    """
    if not interactivity_url.startswith("https://"):
        raise ValueError(f"interactivity URL {interactivity_url!r}: Slack requires https")
    if not 1 <= len(name) <= 35:
        raise ValueError(f"name {name!r}: Slack allows 1-35 characters")
    return {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {
            "name": name,
            "description": "Priority escalations approved in Slack, job owners told",
            "long_description": _LONG_DESCRIPTION,
            "background_color": "#232f3e",
        },
        "features": {
            "app_home": {
                "home_tab_enabled": False,
                "messages_tab_enabled": True,
                "messages_tab_read_only_enabled": True,
            },
            "bot_user": {"display_name": name, "always_online": True},
        },
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}},
        "settings": {
            "interactivity": {"is_enabled": True, "request_url": interactivity_url},
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }


def manifest_yaml(interactivity_url: str = PLACEHOLDER_URL, name: str = "quotagov") -> str:
    """:func:`manifest` as the YAML ``slack/manifest.yaml`` holds (keys in order)."""
    header = (
        "# Slack app manifest of quotagov (generated: quotagov slack-manifest --write "
        f"{MANIFEST_PATH}).\n"
        "# Fill in the request URL with: quotagov slack-manifest --stack <stack name>\n"
    )
    body = yaml.safe_dump(
        manifest(interactivity_url, name), sort_keys=False, width=88, allow_unicode=True
    )
    return header + body
