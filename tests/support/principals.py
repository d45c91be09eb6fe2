"""The callers of the example policy (``src/quotagov/examples/policy.yaml``), as the STS
assumed-role ARNs API Gateway's IAM authorizer reports."""

from __future__ import annotations

from support.aws import ACCOUNT


def assumed_role(role: str, session: str) -> str:
    """``arn:aws:sts::<account>:assumed-role/<role>/<session>``."""
    return f"arn:aws:sts::{ACCOUNT}:assumed-role/{role}/{session}"


ALICE = assumed_role("researcher", "alice")  # research member, Slack U0ALICE
BOB = assumed_role("researcher", "bob")  # research member
DAVE = assumed_role("researcher", "dave")  # applied member
ERIN = assumed_role("researcher", "erin")  # research approver
FRANK = assumed_role("release", "frank")  # release member
GRACE = assumed_role("ml-admins", "grace")  # platform administrator
