"""Execution roles bound in the policy: which SageMaker execution roles a team's jobs
may name in ``serviceRequestPayload.RoleArn`` (``docs/design.md``, "Trust model": authority is
bound in the policy).

A team and a workload class each list ``executionRoles``: exact IAM role ARNs, or
patterns where ``*`` stands for any run of characters **within one segment** of the
role's path and name, e.g. ``arn:aws:iam::111122223333:role/sm-exec-research-*``. Unlike
IAM's own resource wildcards, a ``*`` here never crosses ``/``: ``role/sm-exec-research*``
does not admit ``role/sm-exec-research-x/admin`` (a role named ``admin`` under a path
someone chose to start like the bound name); to admit a path, write it
(``role/team-a/*``, one level below ``/team-a/``).
A job may name a role bound to its team or to its workload class; any other role is a
policy refusal (422). The stack's ``iam:PassRole`` grant (``TrainingRoleName``) is
the outer bound: it limits what quotagov's functions can pass at all, the policy
decides which of those roles each team may use.

A pattern must name an IAM role (``arn:<partition>:iam::<12-digit account>:role/...``)
with no wildcard in the partition or account and at least one literal character in
its path and name; ``?`` and ``[...]`` are not wildcards here and are refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

#: What an execution-role pattern must look like (the part after ``role/`` may hold
#: ``*``; IAM role names and paths use ``\w+=,.@-`` and ``/``).
_ROLE_PATTERN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/(?P<rest>[\w+=,.@/*-]{1,576})$")


def role_pattern_fault(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable execution-role ARN or pattern, or None.

    Returns:
        A sentence naming the fault (for ``policy validate``), or None when valid.
    """
    match = _ROLE_PATTERN.match(pattern)
    if match is None:
        return (
            f"{pattern!r} is not an IAM role ARN or pattern "
            "(arn:aws:iam::<12-digit account>:role/<path and name, * as wildcard>)"
        )
    if not match.group("rest").replace("*", "").strip("/"):
        return f"{pattern!r} matches every role of the account; name the roles"
    return None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + "[^/]*".join(re.escape(part) for part in pattern.split("*")) + "$")


def role_matches(role_arn: str, pattern: str) -> bool:
    """True when ``role_arn`` is ``pattern`` or matches it (``*`` = any characters but
    ``/``: a wildcard never reaches into a deeper path)."""
    return bool(_compiled(pattern).match(role_arn))


def role_allowed(role_arn: str, patterns: Iterable[str]) -> bool:
    """True when ``role_arn`` matches one of ``patterns``."""
    return any(role_matches(role_arn, pattern) for pattern in patterns)


def representative_role(patterns: Iterable[str]) -> str | None:
    """An execution-role ARN that the first of ``patterns`` admits, or None when empty.

    Each ``*`` is filled with ``whatif``; used where a request must name some role the
    policy binds (the what-if tool routes a workload's jobs as the controller would,
    and a trace has no ``RoleArn`` of its own).
    """
    for pattern in patterns:
        return pattern.replace("*", "whatif")
    return None
