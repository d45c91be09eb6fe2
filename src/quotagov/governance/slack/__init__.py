"""Slack for every feature, side by side: shared Block Kit pieces (:mod:`.blocks`), the
escalation messages (:mod:`.escalations`), the disposition messages
(:mod:`.dispositions`), and ``block_actions`` parsing and routing (:mod:`.interactions`)."""
