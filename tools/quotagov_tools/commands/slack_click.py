"""``quotagov slack-click ID --user U... [--action approve]``: click a button in local Slack.

A client of a running ``quotagov serve``: finds the fake Slack message whose button
``<prefix>_<action>`` carries ``ID`` (an escalation id for ``approve``/``deny``, a
submission id for ``resubmit``/``reclassify``/``abandon``), builds the ``block_actions``
request Slack would send for ``--user`` clicking it, signs it with
``SLACK_SIGNING_SECRET`` (or ``--secret``) at the server's virtual time, posts it to
``/slack/interactions`` and says what happened.

Slack's endpoint answers 200 to every click it could read; a click that changed
nothing (not an approver, the requester approving their own request, already decided)
is told to the clicker alone, through the click's ``response_url``. So the command
reads those answers back (``GET /_local/slack/responses``):

- exit 0: the click was applied; prints ``applied: <the message as it now reads>``;
- exit 1: refused; prints ``refused: <why>`` on stderr (the ephemeral answer), or the
  HTTP status and reply when the endpoint did not answer 2xx (a bad signature: 401);
- exit 2: no such button, or the server cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

ACTIONS = ("approve", "deny", "resubmit", "reclassify", "abandon")


def register(subparsers: Any) -> None:
    """Add the ``slack-click`` subcommand."""
    parser = subparsers.add_parser(
        "slack-click",
        help="click a button of a message in the local (fake) Slack of `quotagov serve`",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("id", help="escalation id (approve/deny) or submission id (dispositions)")
    parser.add_argument("--user", required=True, help="the clicking Slack user id, e.g. U0ERIN")
    parser.add_argument("--action", choices=ACTIONS, default="approve")
    parser.add_argument("--url", default="http://127.0.0.1:3000", help="the serve address")
    parser.add_argument("--secret", help="signing secret (default: $SLACK_SIGNING_SECRET)")
    parser.set_defaults(func=run)


def _call(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def run(args: argparse.Namespace) -> int:
    """Find the button, click it signed; see the module doc for the exit codes."""
    from quotagov_tools.local.slack_clicks import (
        ButtonNotFoundError,
        block_actions_payload,
        signed_form,
    )

    secret = args.secret or os.environ.get("SLACK_SIGNING_SECRET")
    if not secret:
        print("quotagov slack-click: give --secret or set SLACK_SIGNING_SECRET", file=sys.stderr)
        return 2
    base = args.url.rstrip("/")
    prefix = "escalation" if args.action in ("approve", "deny") else "disposition"
    action_id = f"{prefix}_{args.action}"
    try:
        messages = _call(f"{base}/_local/slack/messages")["messages"]
        now = float(_call(f"{base}/_local/clock")["now"])
    except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
        print(f"quotagov slack-click: cannot reach {base}: {exc}", file=sys.stderr)
        return 2
    for message in reversed(messages):
        try:
            clicked = block_actions_payload(
                user=args.user,
                message=message,
                action_id=action_id,
                response_url="",
                action_ts=now,
                value=args.id,
            )
        except ButtonNotFoundError:
            continue
        reply_to = _call(
            f"{base}/_local/slack/response-url",
            json.dumps({"channel": message["channel"], "ts": message["ts"]}).encode(),
            {"Content-Type": "application/json"},
        )["responseUrl"]
        payload = {**clicked, "response_url": reply_to}
        body, headers = signed_form(payload, secret, now)
        request = urllib.request.Request(
            f"{base}/slack/interactions", data=body.encode(), headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode()
        if not 200 <= status < 300:
            print(f"refused: HTTP {status} {text}".rstrip(), file=sys.stderr)
            return 1
        return _outcome(base, reply_to, message)
    print(
        f"quotagov slack-click: no message has a {action_id!r} button for {args.id!r}",
        file=sys.stderr,
    )
    return 2


def _outcome(base: str, reply_to: str, clicked: dict[str, Any]) -> int:
    """Exit code and report of a click the endpoint answered 2xx (module doc)."""
    key = urllib.parse.urlsplit(reply_to).path
    try:
        answers = [
            r for r in _call(f"{base}/_local/slack/responses")["responses"] if r.get("url") == key
        ]
        messages = _call(f"{base}/_local/slack/messages")["messages"]
    except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
        print(f"quotagov slack-click: cannot read the outcome from {base}: {exc}", file=sys.stderr)
        return 2
    if answers:
        for answer in answers:
            print(f"refused: {answer.get('text') or '(no text)'}", file=sys.stderr)
        return 1
    now = next(
        (m for m in messages if (m["channel"], m["ts"]) == (clicked["channel"], clicked["ts"])),
        clicked,
    )
    print(f"clicked; the message now reads: {now.get('text') or '(message without text)'}")
    return 0
