"""``quotagov slack-manifest``: the Slack app manifest, with the interactivity URL filled.

The URL is ``--interactivity-url``, or the ``SlackInteractivityUrl`` output of
CloudFormation stack ``--stack`` (``DescribeStacks``, with ``--profile``/``--region`` or
boto3's settings), else the placeholder of ``slack/manifest.yaml``. Prints YAML (or
``--json``); ``--write PATH`` writes it instead. Paste the output into
api.slack.com/apps > Create New App > From an app manifest (``docs/deploy.md``).

Exit 0; 2 with one line on stderr when the stack cannot be read or has no such output.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``slack-manifest`` subcommand."""
    parser = subparsers.add_parser(
        "slack-manifest",
        help="print the Slack app manifest with the stack's interactivity URL",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--stack", help="read SlackInteractivityUrl from this stack's outputs")
    parser.add_argument("--interactivity-url", help="the URL itself (https)")
    parser.add_argument("--name", default="quotagov", help="app and bot name (default quotagov)")
    parser.add_argument("--profile", help="AWS profile for --stack")
    parser.add_argument("--region", help="AWS Region for --stack")
    parser.add_argument("--json", action="store_true", help="JSON instead of YAML")
    parser.add_argument("--write", type=Path, metavar="PATH", help="write to PATH")
    parser.set_defaults(func=run)


def stack_output(stack: str, key: str, *, profile: str | None, region: str | None) -> str:
    """Output ``key`` of CloudFormation stack ``stack``. Raises ``LookupError``."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        session = boto3.Session(profile_name=profile, region_name=region)
        stacks = session.client("cloudformation").describe_stacks(StackName=stack)["Stacks"]
    except (BotoCoreError, ClientError) as exc:
        raise LookupError(f"--stack {stack}: {exc}") from exc
    for output in stacks[0].get("Outputs", []) if stacks else []:
        if output.get("OutputKey") == key:
            return str(output["OutputValue"])
    raise LookupError(f"--stack {stack}: the stack has no {key} output")


def run(args: argparse.Namespace) -> int:
    """Render the manifest; 0, or 2 when the URL cannot be found or is not https."""
    from quotagov_tools.deploy.slack_manifest import PLACEHOLDER_URL, manifest, manifest_yaml

    try:
        url = args.interactivity_url
        if url is None and args.stack:
            url = stack_output(
                args.stack, "SlackInteractivityUrl", profile=args.profile, region=args.region
            )
        url = url or PLACEHOLDER_URL
        text = (
            json.dumps(manifest(url, args.name), indent=2) + "\n"
            if args.json
            else manifest_yaml(url, args.name)
        )
    except (LookupError, ValueError) as exc:
        print(f"quotagov slack-manifest: {exc}", file=sys.stderr)
        return 2
    if args.write:
        args.write.write_text(text, encoding="utf-8")
        print(f"wrote {args.write}")
    else:
        sys.stdout.write(text)
    return 0
