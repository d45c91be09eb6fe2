"""``slack/manifest.yaml``: the generated manifest, valid against Slack's manifest fields.

The models below are the fields of Slack's app manifest reference
(https://docs.slack.dev/reference/app-manifest) that an app like this one may use, with
their documented limits; an unknown key, a missing required one or a value out of its
limits fails. ``quotagov slack-manifest`` fills the interactivity URL from the stack's
``SlackInteractivityUrl`` output (moto's CloudFormation here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, HttpUrl

from quotagov_tools.cli import main
from quotagov_tools.deploy.slack_manifest import PLACEHOLDER_URL, manifest, manifest_yaml

ROOT = Path(__file__).resolve().parents[2]

#: Bot token scopes Slack documents for what quotagov calls (chat.postMessage/update).
KNOWN_BOT_SCOPES = {"chat:write", "chat:write.public", "im:write", "users:read"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Metadata(_Strict):
    major_version: Literal[1, 2]
    minor_version: int = Field(ge=0)


class DisplayInformation(_Strict):
    name: str = Field(min_length=1, max_length=35)
    description: str | None = Field(default=None, max_length=140)
    long_description: str | None = Field(default=None, min_length=174, max_length=4000)
    background_color: str | None = Field(
        default=None, pattern=r"^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$"
    )


class AppHome(_Strict):
    home_tab_enabled: bool = False
    messages_tab_enabled: bool = False
    messages_tab_read_only_enabled: bool = False


class BotUser(_Strict):
    display_name: str = Field(min_length=1, max_length=80)
    always_online: bool = False


class Features(_Strict):
    app_home: AppHome | None = None
    bot_user: BotUser | None = None


class Scopes(_Strict):
    bot: list[str] = Field(default_factory=list, max_length=255)
    user: list[str] = Field(default_factory=list, max_length=255)


class OAuthConfig(_Strict):
    scopes: Scopes
    redirect_urls: list[HttpUrl] | None = None


class Interactivity(_Strict):
    is_enabled: bool
    request_url: HttpUrl | None = None
    message_menu_options_url: HttpUrl | None = None


class Settings(_Strict):
    interactivity: Interactivity | None = None
    org_deploy_enabled: bool = False
    socket_mode_enabled: bool = False
    token_rotation_enabled: bool = False


class SlackManifest(_Strict):
    metadata: Metadata | None = Field(default=None, alias="_metadata")
    display_information: DisplayInformation
    features: Features | None = None
    oauth_config: OAuthConfig | None = None
    settings: Settings | None = None


def test_the_committed_manifest_is_the_generated_one() -> None:
    assert (ROOT / "slack/manifest.yaml").read_text(encoding="utf-8") == manifest_yaml(), (
        "slack/manifest.yaml drifted: quotagov slack-manifest --write slack/manifest.yaml"
    )


def test_it_is_valid_against_slacks_manifest_fields() -> None:
    parsed = SlackManifest.model_validate(
        yaml.safe_load((ROOT / "slack/manifest.yaml").read_text())
    )
    assert parsed.settings is not None and parsed.settings.interactivity is not None
    assert parsed.settings.interactivity.is_enabled
    assert str(parsed.settings.interactivity.request_url) == PLACEHOLDER_URL.lower()
    # interactivity over HTTPS, not a socket: Slack posts block_actions to the API
    assert parsed.settings.socket_mode_enabled is False
    assert parsed.oauth_config is not None
    assert set(parsed.oauth_config.scopes.bot) <= KNOWN_BOT_SCOPES
    assert parsed.oauth_config.scopes.bot == ["chat:write"]
    assert parsed.features is not None and parsed.features.bot_user is not None


def test_the_models_refuse_what_slack_refuses() -> None:
    bad = manifest()
    bad["display_information"]["name"] = "x" * 36
    bad["settings"]["interactivity"]["request_urll"] = "typo"
    with pytest.raises(ValueError) as raised:
        SlackManifest.model_validate(bad)
    assert {e["loc"] for e in raised.value.errors()} == {  # type: ignore[attr-defined]
        ("display_information", "name"),
        ("settings", "interactivity", "request_urll"),
    }
    with pytest.raises(ValueError, match="https"):
        manifest("http://127.0.0.1:3000/slack/interactions")


def test_the_command_fills_the_url_from_the_stack_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from moto import mock_aws

    for name, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "eu-west-1"),
    ):
        monkeypatch.setenv(name, value)
    url = "https://a1b2c3.execute-api.eu-west-1.amazonaws.com/v1/slack/interactions"
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"SlackInteractivityUrl": {"Value": url}},
    }
    with mock_aws():
        boto3.client("cloudformation").create_stack(
            StackName="quotagov", TemplateBody=json.dumps(template)
        )
        assert main(["slack-manifest", "--stack", "quotagov", "--json"]) == 0
        rendered = json.loads(capsys.readouterr().out)
        assert main(["slack-manifest", "--stack", "no-such-stack"]) == 2
        assert "no-such-stack" in capsys.readouterr().err
    assert rendered["settings"]["interactivity"]["request_url"] == url
    assert rendered == manifest(url)
    SlackManifest.model_validate(rendered)
