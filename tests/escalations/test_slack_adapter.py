"""The Slack adapter against the loopback fake Slack Web API, and the fake itself."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters
from moto import mock_aws
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from quotagov import composition
from quotagov.adapters.slack import (
    SlackChatNotifier,
    build_web_client,
    load_slack_credentials,
    parse_signing_secret,
    parse_slack_secret,
    respond,
    respond_ephemeral,
)
from quotagov.governance.ports import ChatError, PostedMessage
from quotagov.settings import Settings
from quotagov.wiring import Services
from quotagov_tools.local.fake_slack import FakeSlack
from support.compose import complete

TOKEN = "xoxb-test-token"
BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": "*hello*"}}]


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(token=TOKEN, channels=["C0GOVERN"]) as fake:
        yield fake


def test_post_then_update_changes_the_message_in_place(slack: FakeSlack) -> None:
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    posted = chat.post("C0GOVERN", "hello", BLOCKS)
    assert posted.channel == "C0GOVERN"
    assert slack.message("C0GOVERN", posted.ts).blocks == BLOCKS

    new_blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "done"}}]
    chat.update(posted, "done", new_blocks)

    message = slack.message("C0GOVERN", posted.ts)
    assert (message.text, message.blocks, message.edits) == ("done", new_blocks, 1)
    assert [c.method for c in slack.calls] == ["chat.postMessage", "chat.update"]
    assert slack.calls[0].token == TOKEN
    assert slack.calls[1].params["ts"] == posted.ts


def test_slack_errors_become_chat_errors_with_slacks_code(slack: FakeSlack) -> None:
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    with pytest.raises(ChatError) as unknown_channel:
        chat.post("C0NOWHERE", "hello", BLOCKS)
    assert unknown_channel.value.error == "channel_not_found"

    with pytest.raises(ChatError) as unknown_ts:
        chat.update(PostedMessage("C0GOVERN", "1.000001"), "x", BLOCKS)
    assert unknown_ts.value.error == "message_not_found"

    wrong_token = SlackChatNotifier(build_web_client("xoxb-wrong", slack.base_url))
    with pytest.raises(ChatError) as bad_auth:
        wrong_token.post("C0GOVERN", "hello", BLOCKS)
    assert bad_auth.value.error == "invalid_auth"
    assert slack.messages == []


def test_fake_answers_like_slack_for_missing_token_and_empty_message(slack: FakeSlack) -> None:
    anonymous = WebClient(base_url=slack.base_url)
    with pytest.raises(SlackApiError) as missing:
        anonymous.chat_postMessage(channel="C0GOVERN", text="hi")
    assert missing.value.response["error"] == "not_authed"

    client = WebClient(token=TOKEN, base_url=slack.base_url)
    with pytest.raises(SlackApiError) as empty, pytest.warns(UserWarning, match="`text`"):
        client.chat_postMessage(channel="C0GOVERN", text="")
    assert empty.value.response["error"] == "no_text"

    answer = client.chat_postMessage(channel="C0GOVERN", text="hi")
    assert answer["ok"] is True
    assert answer["message"]["text"] == "hi"
    assert answer["ts"] == answer["message"]["ts"]


def test_injected_failure_is_answered_once(slack: FakeSlack) -> None:
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    slack.fail_next("chat.postMessage", "ratelimited_by_test")
    with pytest.raises(ChatError, match="ratelimited_by_test"):
        chat.post("C0GOVERN", "hello", BLOCKS)
    assert chat.post("C0GOVERN", "hello", BLOCKS).channel == "C0GOVERN"


def test_response_url_replaces_the_original_and_is_usable_five_times(slack: FakeSlack) -> None:
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    posted = chat.post("C0GOVERN", "asking", BLOCKS)
    url = slack.response_url_for(posted.channel, posted.ts)
    for n in range(5):
        respond(url, f"answer {n}", BLOCKS)
    assert slack.message(posted.channel, posted.ts).text == "answer 4"
    with pytest.raises(ChatError, match="used_url"):
        respond(url, "sixth", BLOCKS)
    assert len(slack.messages) == 1


def test_local_messages_endpoint_lists_current_state(slack: FakeSlack) -> None:
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    posted = chat.post("C0GOVERN", "hello", BLOCKS)
    with urllib.request.urlopen(f"{slack.url}/_local/slack/messages") as reply:
        listed = json.load(reply)
    assert listed == {
        "messages": [
            {"channel": "C0GOVERN", "ts": posted.ts, "text": "hello", "blocks": BLOCKS, "edits": 0}
        ]
    }


def test_base_url_must_end_with_a_slash() -> None:
    with pytest.raises(ValueError, match="SLACK_API_URL must end with '/'"):
        build_web_client(TOKEN, "http://127.0.0.1:9/api")


def test_secret_fields_are_checked_by_name() -> None:
    assert parse_slack_secret('{"botToken": "xoxb-1", "signingSecret": "s"}').bot_token == "xoxb-1"
    # the bot-token secret no longer needs the signing secret (it has its own secret)
    assert parse_slack_secret({"botToken": "xoxb-1"}).signing_secret == ""
    with pytest.raises(ValueError, match="'botToken' is missing"):
        parse_slack_secret({"signingSecret": "s"})
    with pytest.raises(ValueError, match="'signingSecret' is missing"):
        parse_slack_secret({"botToken": "xoxb-1", "signingSecret": ""})
    with pytest.raises(ValueError, match="not JSON"):
        parse_slack_secret("xoxb-1")
    assert parse_signing_secret('{"signingSecret": "s"}') == "s"
    with pytest.raises(ValueError, match="'signingSecret' is missing"):
        parse_signing_secret({"botToken": "xoxb-1"})


def test_the_signing_secret_comes_from_its_own_secret(
    slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deployed: the bot-token secret holds no signing secret; the Slack function reads
    ``SLACK_SIGNING_SECRET_ARN`` (the only role its resource policy admits)."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    with mock_aws():
        secrets = boto3.client("secretsmanager", region_name="eu-west-1")
        bot = secrets.create_secret(
            Name="quotagov/slack", SecretString=json.dumps({"botToken": TOKEN})
        )["ARN"]
        signing = secrets.create_secret(
            Name="quotagov/slack-signing", SecretString=json.dumps({"signingSecret": "shh"})
        )["ARN"]
        parameters.clear_caches()
        only_signing = composition.SlackInteractions(
            complete(Settings(slack_signing_secret_arn=signing))
        )
        assert only_signing.slack_signing_secret == "shh"
        bot_only = Services(Settings(slack_secret_arn=bot, slack_api_url=slack.base_url))
        try:
            assert bot_only.chat.post("C0GOVERN", "wired", BLOCKS).channel == "C0GOVERN"
        finally:
            parameters.clear_caches()


def test_wiring_builds_chat_from_the_secret(
    slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    with mock_aws():
        secrets = boto3.client("secretsmanager", region_name="eu-west-1")
        arn = secrets.create_secret(
            Name="quotagov/slack",
            SecretString=json.dumps({"botToken": TOKEN, "signingSecret": "shh"}),
        )["ARN"]
        parameters.clear_caches()
        services = Services(Settings(slack_secret_arn=arn, slack_api_url=slack.base_url))
        try:
            posted = services.chat.post("C0GOVERN", "wired", BLOCKS)
            assert slack.message("C0GOVERN", posted.ts).text == "wired"
            assert load_slack_credentials(arn).signing_secret == "shh"
        finally:
            parameters.clear_caches()


def test_an_ephemeral_response_is_no_channel_message(slack: FakeSlack) -> None:
    # Slack shows a response_url post to the clicker only unless it says in_channel
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    posted = chat.post("C0GOVERN", "asking", BLOCKS)
    respond_ephemeral(slack.response_url_for(posted.channel, posted.ts), "not you")
    assert [m.text for m in slack.messages] == ["asking"]
    (call,) = slack.calls_to("response_url")
    assert call.params == {"text": "not you", "response_type": "ephemeral",
                           "replace_original": False}  # fmt: skip
    WebhookClient(slack.response_url_for(posted.channel, posted.ts)).send(
        text="for everyone", response_type="in_channel"
    )
    assert [m.text for m in slack.messages] == ["asking", "for everyone"]


def test_a_ratelimited_answer_in_the_body_is_retried(slack: FakeSlack) -> None:
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    posted = chat.post("C0GOVERN", "asking", BLOCKS)
    slack.fail_next("chat.update", "ratelimited")
    chat.update(posted, "decided", BLOCKS)
    updates = slack.calls_to("chat.update")
    assert [call.response.get("error") for call in updates] == ["ratelimited", None]
    assert slack.message(posted.channel, posted.ts).text == "decided"


def test_a_message_refused_as_too_long_is_sent_as_its_text_and_its_buttons(
    slack: FakeSlack,
) -> None:
    chat = SlackChatNotifier(build_web_client(TOKEN, slack.base_url))
    buttons = {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "action_id": "escalation_approve",
                "text": {"type": "plain_text", "text": "Approve"},
            }
        ],
    }
    slack.fail_next("chat.postMessage", "msg_too_long")
    card = chat.post("C0GOVERN", "Priority escalation for bg-2", [*BLOCKS, buttons])
    text = {"type": "plain_text", "text": "Priority escalation for bg-2"}
    assert slack.message(card.channel, card.ts).blocks == [
        {"type": "section", "text": text},
        buttons,
    ]
    slack.fail_next("chat.update", "msg_too_long")
    chat.update(card, "Priority escalation for bg-2: APPLIED by U0ERIN", BLOCKS)
    message = slack.message(card.channel, card.ts)
    outcome = {"type": "plain_text", "text": "Priority escalation for bg-2: APPLIED by U0ERIN"}
    assert message.blocks == [{"type": "section", "text": outcome}]
