"""Block Kit of the owner's direct messages, built with slack_sdk's Block Kit models.

One message per event (``docs/design.md``, "People and operators are told"): a section
with what happened (mrkdwn), a context line with the job and where to see it. slack_sdk's models
(:mod:`slack_sdk.models.blocks`) check Block Kit's limits (section text <= 3000
characters, context elements <= 10, Slack's Block Kit reference) when the blocks are
serialized;
the texts given here are short by construction (job names <= 128 characters,
reasons cut by the use case to :data:`MAX_REASON_CHARS`).
"""

from __future__ import annotations

from quotagov.governance.slack.blocks import Block, escape

#: How much of one refusal/failure reason an owner message quotes (characters).
MAX_REASON_CHARS = 500


def owner_blocks(text: str, *, job_name: str, submission_id: str, link: str) -> list[Block]:
    """The DM's blocks: ``text`` (mrkdwn, escaped) and a context line naming the job and
    linking its view.

    Args:
        text: what happened, as the owner reads it (plain text; escaped here).
        job_name: the Batch job name.
        submission_id: the quotagov submission id.
        link: an ``https://`` URL of the job view, or a plain hint such as
            ``GET /jobs/<id>`` when no URL is configured.
    """
    from slack_sdk.models.blocks import (  # loaded when a message is built (cold start)
        ContextBlock,
        MarkdownTextObject,
        SectionBlock,
    )

    where = f"<{link}|job view>" if link.startswith("https://") else f"job view: `{link}`"
    blocks = [
        SectionBlock(text=MarkdownTextObject(text=escape(text))),
        ContextBlock(
            elements=[
                MarkdownTextObject(
                    text=f"quotagov · *{escape(job_name)}* · `{submission_id}` · {where}"
                )
            ]
        ),
    ]
    return [block.to_dict() for block in blocks]
